//! Where the cache is: one rule for every build script and for the run-time search.

use std::ffi::OsString;
use std::path::PathBuf;

/// Set (non-empty) to forbid running pip; what is already cached is still used.
pub const NO_FETCH_VAR: &str = "ORT_BIND_NO_FETCH";

/// The environment variables that decide what is fetched and where it is kept, for
/// `cargo:rerun-if-env-changed`.
pub const ENV_VARS: &[&str] = &["ORT_BIND_CACHE_DIR", NO_FETCH_VAR, "XDG_CACHE_HOME", "HOME"];

/// The variables the cache root is computed from; a value so tests can fake them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CacheEnv {
    /// `ORT_BIND_CACHE_DIR`.
    pub cache_dir: Option<OsString>,
    /// `XDG_CACHE_HOME`.
    pub xdg_cache_home: Option<OsString>,
    /// `HOME`.
    pub home: Option<OsString>,
}

impl CacheEnv {
    /// The variables of this process (empty ones count as unset).
    pub fn current() -> CacheEnv {
        CacheEnv {
            cache_dir: non_empty_var("ORT_BIND_CACHE_DIR"),
            xdg_cache_home: non_empty_var("XDG_CACHE_HOME"),
            home: non_empty_var("HOME"),
        }
    }

    /// `$ORT_BIND_CACHE_DIR`, else `$XDG_CACHE_HOME/ort-bind`, else `$HOME/.cache/ort-bind`;
    /// `None` when none of them is set.
    pub fn root(&self) -> Option<PathBuf> {
        if let Some(dir) = &self.cache_dir {
            return Some(PathBuf::from(dir));
        }
        if let Some(dir) = &self.xdg_cache_home {
            return Some(PathBuf::from(dir).join("ort-bind"));
        }
        let home = self.home.as_ref()?;
        Some(PathBuf::from(home).join(".cache").join("ort-bind"))
    }
}

/// The per-user cache root of this process (see [`CacheEnv::root`]).
pub fn cache_root() -> Option<PathBuf> {
    CacheEnv::current().root()
}

pub(crate) fn non_empty_var(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence() {
        let all = CacheEnv {
            cache_dir: Some("/c".into()),
            xdg_cache_home: Some("/x".into()),
            home: Some("/h".into()),
        };
        assert_eq!(all.root(), Some(PathBuf::from("/c")));
        let no_dir = CacheEnv {
            cache_dir: None,
            ..all.clone()
        };
        assert_eq!(no_dir.root(), Some(PathBuf::from("/x/ort-bind")));
        let home_only = CacheEnv {
            xdg_cache_home: None,
            ..no_dir
        };
        assert_eq!(home_only.root(), Some(PathBuf::from("/h/.cache/ort-bind")));
        assert_eq!(CacheEnv::default().root(), None);
    }
}
