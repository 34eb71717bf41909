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
    /// Blank nodes are labelled `b<number>` as an index labels them (a
    /// store's own dump): they keep their numbers, so a store rebuilt from
    /// its dump keeps its blank nodes' IDs. Give such an input first: the
    /// other inputs' blank nodes are numbered after the largest seen.
    pub index_blank_labels: bool,
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
            index_blank_labels: false,
        })
    }

    pub fn stdin(format: Format, compression: Compression, graph: Option<String>) -> Input {
        Input {
            source: Source::Stdin,
            format,
            compression,
            graph,
            index_blank_labels: false,
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
        let text: Box<dyn Read + Send> = match self.compression {
            Compression::None => Box::new(counted),
            Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(counted)),
            Compression::Zstd => {
                let mut decoder = zstd::Decoder::with_buffer(counted).at(self.path_for_errors())?;
                // Dumps are often written with long windows (`zstd --long=31`).
                decoder.window_log_max(31).at(self.path_for_errors())?;
                Box::new(decoder)
            }
        };
        Ok(Box::new(SkipBom::new(text)))
    }
}

/// The text without a leading UTF-8 byte-order mark: editors on Windows
/// write one, and none of the formats allows it (the parsers would report
/// an unexpected character at 1:1).
struct SkipBom<R> {
    inner: R,
    /// The first bytes, read to look for the mark, not yet handed out.
    head: Vec<u8>,
    checked: bool,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl<R: Read> SkipBom<R> {
    fn new(inner: R) -> Self {
        SkipBom {
            inner,
            head: Vec::new(),
            checked: false,
        }
    }
}

impl<R: Read> Read for SkipBom<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if !self.checked {
            let mut first = [0u8; 3];
            let mut got = 0;
            while got < 3 {
                match self.inner.read(&mut first[got..]) {
                    Ok(0) => break,
                    Ok(n) => got += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            self.checked = true;
            if &first[..got] != BOM {
                self.head = first[..got].to_vec();
            }
        }
        if !self.head.is_empty() {
            let n = self.head.len().min(buf.len());
            buf[..n].copy_from_slice(&self.head[..n]);
            self.head.drain(..n);
            return Ok(n);
        }
        self.inner.read(buf)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        // One byte at a time, the hardest way to meet the mark.
        let mut reader = SkipBom::new(std::io::Cursor::new(bytes.to_vec()).take(u64::MAX));
        let mut byte = [0u8; 1];
        while reader.read(&mut byte).unwrap() == 1 {
            out.push(byte[0]);
        }
        out
    }

    #[test]
    fn a_leading_byte_order_mark_is_dropped_and_nothing_else() {
        assert_eq!(read_all(b"\xEF\xBB\xBF<a> <b> <c> .\n"), b"<a> <b> <c> .\n");
        assert_eq!(read_all(b"<a> <b> <c> .\n"), b"<a> <b> <c> .\n");
        assert_eq!(read_all(b"\xEF\xBB"), b"\xEF\xBB");
        assert_eq!(read_all(b"ab"), b"ab");
        assert_eq!(read_all(b""), b"");
        assert_eq!(read_all(b"\xEF\xBB\xBF\xEF\xBB\xBF"), b"\xEF\xBB\xBF");
    }
}
