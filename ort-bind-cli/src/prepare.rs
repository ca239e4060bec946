//! `ort-bind prepare`: writes (or with `--check`, verifies) the offline signature cache
//! the derive and `bindings!` fall back on where a model file is absent. A thin front end
//! over `ort-bind-codegen`'s signature cache.

use std::path::{Path, PathBuf};

use clap::Args;
use ort_bind_codegen::__private::cache;

/// Arguments of `ort-bind prepare`.
#[derive(Debug, Args)]
pub(crate) struct PrepareArgs {
    /// The crate root (the folder of its Cargo.toml) the macros resolve model paths
    /// against; the cache goes to `<root>/.ort-bind/`.
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Verify that each cache exists and matches its model; write nothing (for CI).
    #[arg(long)]
    check: bool,
    /// Model files, as the macros name them (relative to the crate root).
    #[arg(required = true)]
    models: Vec<PathBuf>,
}

/// The model path relative to `root`, as a macro would name it.
fn relative(root: &Path, model: &Path) -> PathBuf {
    if model.is_absolute() {
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let model = std::fs::canonicalize(model).unwrap_or_else(|_| model.to_path_buf());
        if let Ok(rel) = model.strip_prefix(&root) {
            return rel.to_path_buf();
        }
        return model;
    }
    model.to_path_buf()
}

/// Writes or checks every cache; reports each model on stdout and fails when any failed.
pub(crate) fn run(args: PrepareArgs) -> Result<(), String> {
    let mut failed = Vec::new();
    for model in &args.models {
        let rel = relative(&args.root, model);
        let result = if args.check {
            cache::verify(&args.root, &rel).map(|path| format!("ok {}", shown(&args.root, &path)))
        } else {
            cache::write(&args.root, &rel).map(|path| format!("wrote {}", shown(&args.root, &path)))
        };
        match result {
            Ok(line) => println!("{line}"),
            Err(e) => {
                eprintln!("error: {e}");
                failed.push(rel.display().to_string());
            }
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} of {} signature caches failed: {}",
            failed.len(),
            args.models.len(),
            failed.join(", ")
        ))
    }
}

fn shown(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}
