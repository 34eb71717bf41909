use std::path::PathBuf;

/// Errors from opening or reading an index.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a Tern index ({reason})")]
    NotAnIndex { path: PathBuf, reason: String },
    #[error("{path}: index format version {found} is not supported (this build reads version {expected}); rebuild it from its sources with `tern load --force --index DIR FILES`")]
    Version {
        path: PathBuf,
        found: u32,
        expected: u32,
    },
    #[error("{path}: corrupt index file ({reason})")]
    Corrupt { path: PathBuf, reason: String },
    #[error("the store is open read-only: updates are not accepted")]
    ReadOnly,
    /// Building a new base (compaction, append) failed; the store is as it was.
    #[error("{0} (the store is unchanged)")]
    Rebuild(String),
    #[error("{path}: the store is open for writing in another process (a server taking updates?)")]
    Locked { path: PathBuf },
}

pub type Result<T, E = IndexError> = std::result::Result<T, E>;

/// Attaches a path to an I/O error.
pub(crate) trait IoContext<T> {
    fn at(self, path: impl Into<PathBuf>) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn at(self, path: impl Into<PathBuf>) -> Result<T> {
        self.map_err(|source| IndexError::Io {
            path: path.into(),
            source,
        })
    }
}
