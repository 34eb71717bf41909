use crate::IndexError;
use std::path::PathBuf;

/// Why a load failed. Every variant names the file it is about.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Syntax(SyntaxError),
    #[error("{path}: cannot tell the format from the file name; use a .nt, .nq, .ttl or .trig name (optionally .gz or .zst), or --format")]
    UnknownFormat { path: PathBuf },
    #[error("{path}: an index already exists here; use --force to replace it")]
    AlreadyExists { path: PathBuf },
    #[error("{path}: exists and is not a Tern index; refusing to replace it")]
    NotAnIndex { path: PathBuf },
    #[error(
        "{file}: after statement {statements}, a term longer than the Turtle and TriG parser \
         reads at once ({message}); N-Triples and N-Quads have no such limit"
    )]
    TermTooLong {
        file: String,
        statements: u64,
        message: String,
    },
    #[error("invalid graph IRI <{iri}>: {message}")]
    InvalidGraph { iri: String, message: String },
    #[error(transparent)]
    Index(#[from] IndexError),
}

/// A bad statement: where it is and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}")]
pub struct SyntaxError {
    pub file: String,
    /// 1-based.
    pub line: u64,
    /// 1-based.
    pub column: u64,
    pub message: String,
}

pub(crate) trait LoadIo<T> {
    fn at(self, path: impl Into<PathBuf>) -> Result<T, LoadError>;
}

impl<T> LoadIo<T> for std::io::Result<T> {
    fn at(self, path: impl Into<PathBuf>) -> Result<T, LoadError> {
        self.map_err(|source| LoadError::Io {
            path: path.into(),
            source,
        })
    }
}
