//! Input files: format and compression from the name, decompressing readers,
//! and a byte counter for progress.

use super::error::{LoadError, LoadIo};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    NTriples,
    NQuads,
    Turtle,
    TriG,
}

impl Format {
    pub fn from_name(name: &str) -> Option<Format> {
        Some(match name.to_ascii_lowercase().as_str() {
            "nt" | "ntriples" | "n-triples" => Format::NTriples,
            "nq" | "nquads" | "n-quads" => Format::NQuads,
            "ttl" | "turtle" => Format::Turtle,
            "trig" => Format::TriG,
            _ => return None,
        })
    }

    /// Line-based formats can be cut at any newline and parsed in parallel.
    pub fn is_line_based(self) -> bool {
        matches!(self, Format::NTriples | Format::NQuads)
    }

    pub fn has_graphs(self) -> bool {
        matches!(self, Format::NQuads | Format::TriG)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    File(PathBuf),
    Stdin,
}

/// One input of a load.
#[derive(Debug, Clone)]
pub struct Input {
    pub source: Source,
    pub format: Format,
    pub compression: Compression,
    /// The graph that receives the triples of a triples format (default graph if
    /// `None`). Quads keep their own graph.
    pub graph: Option<String>,
}

impl Input {
    /// Reads format and compression from the file name (`data.nt.zst`), unless a
    /// format is given.
    pub fn file(
        path: impl Into<PathBuf>,
        format: Option<Format>,
        graph: Option<String>,
    ) -> Result<Input, LoadError> {
        let path = path.into();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        let (stem, compression) = if let Some(s) = name.strip_suffix(".gz") {
            (s, Compression::Gzip)
        } else if let Some(s) = name.strip_suffix(".zst") {
            (s, Compression::Zstd)
        } else {
            (name.as_str(), Compression::None)
        };
        let format = match format {
            Some(f) => f,
            None => Path::new(stem)
                .extension()
                .and_then(|e| e.to_str())
                .and_then(Format::from_name)
                .ok_or_else(|| LoadError::UnknownFormat { path: path.clone() })?,
        };
        Ok(Input {
            source: Source::File(path),
            format,
            compression,
            graph,
        })
    }

    pub fn stdin(format: Format, compression: Compression, graph: Option<String>) -> Input {
        Input {
            source: Source::Stdin,
            format,
            compression,
            graph,
        }
    }

    /// How errors name this input.
    pub fn display_name(&self) -> String {
        match &self.source {
            Source::File(p) => p.display().to_string(),
            Source::Stdin => "<stdin>".to_owned(),
        }
    }

    pub fn path_for_errors(&self) -> PathBuf {
        match &self.source {
            Source::File(p) => p.clone(),
            Source::Stdin => PathBuf::from("<stdin>"),
        }
    }

    /// Size in bytes before decompression, when known.
    pub fn size(&self) -> Option<u64> {
        match &self.source {
            Source::File(p) => std::fs::metadata(p).ok().map(|m| m.len()),
            Source::Stdin => None,
        }
    }

    /// A reader of the decompressed text; `consumed` counts raw bytes read.
    pub fn open(&self, consumed: Arc<AtomicU64>) -> Result<Box<dyn Read + Send>, LoadError> {
        let raw: Box<dyn Read + Send> = match &self.source {
            Source::File(p) => Box::new(File::open(p).at(p)?),
            Source::Stdin => Box::new(std::io::stdin()),
        };
        let counted = BufReader::with_capacity(
            1 << 20,
            Counting {
                inner: raw,
                consumed,
            },
        );
        Ok(match self.compression {
            Compression::None => Box::new(counted),
            Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(counted)),
            Compression::Zstd => {
                let mut decoder = zstd::Decoder::with_buffer(counted).at(self.path_for_errors())?;
                // Dumps are often written with long windows (`zstd --long=31`).
                decoder.window_log_max(31).at(self.path_for_errors())?;
                Box::new(decoder)
            }
        })
    }
}

struct Counting {
    inner: Box<dyn Read + Send>,
    consumed: Arc<AtomicU64>,
}

impl Read for Counting {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}
