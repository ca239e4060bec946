//! Making `cargo build` re-run the macros when a model file changes, without reading it.
//!
//! Cargo rebuilds a crate when a file listed in its dep-info (written by rustc) is newer
//! than the last build. On stable Rust a proc macro can only add a file there through
//! `include_bytes!`/`include_str!`, which read the whole file: measured here on a 1 GiB
//! model, `const _: &[u8] = include_bytes!(..)` took 87 s and 16 GB of memory, and even a
//! `let _ = include_bytes!(..)` in a dead function 3 s and 2 GB, on every build.
//!
//! The trick used instead: rustc reads an included file when it expands the
//! `include_bytes!`, but Cargo only looks at the file's modification time at the *next*
//! build, following symlinks. So the macro
//!
//! 1. writes a tiny placeholder at a *link path* in the temp dir
//!    (`<tmp>/ort-bind-track/<hash>-<model file name>`),
//! 2. emits `include_bytes!("<link path>")` (rustc reads a few bytes and records the path
//!    in the dep-info), followed by
//! 3. `track_model!("<link path>", "<model>")`, a proc macro that, expanded after the
//!    include, replaces the placeholder with a symlink to the model.
//!
//! At the next build Cargo stats the link path, sees the model's modification time, and
//! rebuilds when the model changed; the macro then writes the placeholder again before
//! rustc reads it. Each macro invocation gets its own link path (the hash covers the
//! crate, the model and the call site), so expansions that interleave cannot make rustc
//! read a link that already points at the model. If the link cannot be made (no
//! symlinks, read-only temp dir), models up to [`INCLUDE_LIMIT`] bytes are included
//! directly and larger ones are not tracked (a later `cargo build` then re-checks only
//! after some other change).

use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::quote;

/// Models up to this size are included directly when no link can be made.
pub const INCLUDE_LIMIT: u64 = 16 << 20;

/// Folder (in the temp dir) that holds link paths.
pub fn track_dir() -> PathBuf {
    std::env::temp_dir().join("ort-bind-track")
}

fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain(std::iter::once(0)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Writes the placeholder at the link path for `model` seen from `site` (any text that
/// identifies the crate and the macro call) and returns the link path.
pub fn placeholder(model: &Path, site: &str) -> std::io::Result<PathBuf> {
    let dir = track_dir();
    std::fs::create_dir_all(&dir)?;
    let model_text = model.to_string_lossy();
    let file_name = model
        .file_name()
        .map_or_else(|| "model".into(), |n| n.to_string_lossy().into_owned());
    let link = dir.join(format!("{:016x}-{file_name}", fnv1a(&[&model_text, site])));
    let tmp = dir.join(format!(
        ".{:016x}-{}.tmp",
        fnv1a(&[&model_text, site]),
        std::process::id()
    ));
    std::fs::write(
        &tmp,
        format!("ort-bind: dependency tracking placeholder for {model_text}\n"),
    )?;
    // `rename` replaces a previous symlink (or placeholder) atomically.
    std::fs::rename(&tmp, &link)?;
    Ok(link)
}

/// Points `link` at `model` (called by `track_model!`, after rustc read the placeholder).
/// Refuses link paths outside [`track_dir`].
pub fn retarget(link: &Path, model: &Path) -> std::io::Result<()> {
    let dir = track_dir();
    if link.parent() != Some(dir.as_path()) || !model.is_absolute() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not an ort-bind link path",
        ));
    }
    #[cfg(unix)]
    {
        let tmp = link.with_extension(format!("link-{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(model, &tmp)?;
        std::fs::rename(&tmp, link)
    }
    #[cfg(not(unix))]
    {
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "symlinks are only used on unix",
        ))
    }
}

/// Tokens that make Cargo rebuild when `model` (present, absolute), `cache` (if any) or
/// the offline switch change. `krate` is the facade path (for `track_model!`).
pub fn tokens(
    krate: &syn::Path,
    model: Option<&Path>,
    cache: Option<&Path>,
    site: &str,
) -> TokenStream {
    let mut stmts = Vec::new();
    if let Some(model) = model {
        let model_text = model.to_string_lossy().into_owned();
        let linked = cfg!(unix).then(|| placeholder(model, site).ok()).flatten();
        match linked {
            Some(link) => {
                let link = link.to_string_lossy().into_owned();
                stmts.push(quote! {
                    let _ = ::core::include_bytes!(#link);
                    #krate::__private::track_model!(#link, #model_text);
                });
            }
            None => {
                let small = std::fs::metadata(model).is_ok_and(|m| m.len() <= INCLUDE_LIMIT);
                if small {
                    stmts.push(quote!(let _ = ::core::include_bytes!(#model_text);));
                }
            }
        }
    }
    if let Some(cache) = cache {
        let cache = cache.to_string_lossy().into_owned();
        stmts.push(quote!(let _ = ::core::include_bytes!(#cache);));
    }
    let offline = crate::cache::OFFLINE_ENV;
    stmts.push(quote!(let _ = ::core::option_env!(#offline);));
    quote! {
        const _: () = {
            #[allow(dead_code)]
            fn __ort_bind_track() {
                #(#stmts)*
            }
        };
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn placeholder_then_link() {
        let model =
            std::env::temp_dir().join(format!("ort-bind-track-test-{}.onnx", std::process::id()));
        std::fs::write(&model, b"model bytes").unwrap();
        let link = placeholder(&model, "test-site").unwrap();
        assert!(
            std::fs::read_to_string(&link)
                .unwrap()
                .contains("placeholder")
        );
        retarget(&link, &model).unwrap();
        assert_eq!(std::fs::read(&link).unwrap(), b"model bytes");
        assert_eq!(std::fs::read_link(&link).unwrap(), model);
        // Again: the placeholder replaces the symlink, not the model behind it.
        let again = placeholder(&model, "test-site").unwrap();
        assert_eq!(again, link);
        assert!(
            std::fs::read_to_string(&link)
                .unwrap()
                .contains("placeholder")
        );
        assert_eq!(std::fs::read(&model).unwrap(), b"model bytes");
        assert!(retarget(Path::new("/etc/passwd"), &model).is_err());
        std::fs::remove_file(&link).unwrap();
        std::fs::remove_file(&model).unwrap();
    }
}
