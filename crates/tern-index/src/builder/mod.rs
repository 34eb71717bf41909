//! The bulk builder behind `tern load`.
//!
//! Phases:
//! 1. **parse**: inputs are read in chunks, cut into pieces at line ends (N-Triples,
//!    N-Quads) or statement batches (Turtle, TriG), parsed and encoded on all cores,
//!    and merged into memory-bounded [runs](runs);
//! 2. **vocabulary**: the runs' sorted keys are merged into the final sorted
//!    vocabulary, and quads get their final IDs;
//! 3. **permutations**: quads are sorted five times (externally when they exceed
//!    the budget), deduplicated, and written as compressed blocks, with statistics.
//!
//! Everything is written into a build directory that replaces the target only
//! when complete (see [`target_dir`]).

mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod input;
mod line_parser;
mod piece;
mod progress;
mod quad_sort;
mod runs;
mod target_dir;
mod vocab_merge;

pub use error::{LoadError, SyntaxError};
pub use input::{Compression, Format, Input, Source};
pub use progress::group;

use crate::meta::{IndexMeta, FORMAT_VERSION, META_FILE};
use crate::stats::STATS_FILE;
use error::LoadIo;
use oxrdf::{NamedNode, Quad};
use oxttl::{TriGParser, TurtleParseError, TurtleParser};
use piece::{Piece, PieceEncoder};
use progress::Progress;
use quad_sort::QuadStore;
use rayon::prelude::*;
use runs::RunBuilder;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
use target_dir::BuildDir;

/// How many bad statements a lenient load reports in full.
const REPORTED_ERRORS: usize = 10;
/// Statements per batch handed from a Turtle/TriG parser to the encoders.
const TURTLE_BATCH: usize = 100_000;

#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Memory budget in bytes for the builder's large structures.
    pub memory: u64,
    /// Skip bad statements instead of stopping at the first.
    pub lenient: bool,
    /// Replace an existing index.
    pub force: bool,
    /// Show progress on stderr.
    pub progress: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            memory: 1 << 30,
            lenient: false,
            force: false,
            progress: false,
        }
    }
}

/// What a successful load reports.
#[derive(Debug, Clone)]
pub struct LoadReport {
    pub meta: IndexMeta,
    /// The first few skipped statements (lenient loads).
    pub first_errors: Vec<SyntaxError>,
}

/// Builds an index at `target` from `inputs`.
pub fn build(
    target: &Path,
    inputs: &[Input],
    options: &LoadOptions,
) -> Result<LoadReport, LoadError> {
    let started = Instant::now();
    let dir = BuildDir::prepare(target, options.force)?;
    let work = dir.work_dir();
    let memory = options.memory.max(1 << 20) as usize;
    let mut progress = Progress::new(options.progress);
    let mut phases = Vec::new();

    progress.phase("parse");
    let phase_start = Instant::now();
    let mut runs = RunBuilder::new(&work, memory * 2 / 5);
    let mut errors = ErrorLog::new(options.lenient);
    let total_size: Option<u64> = inputs.iter().map(Input::size).sum();
    let consumed = Arc::new(AtomicU64::new(0));
    for input in inputs {
        let graph = match &input.graph {
            None => None,
            Some(iri) => Some(NamedNode::new(iri).map_err(|e| LoadError::InvalidGraph {
                iri: iri.clone(),
                message: e.to_string(),
            })?),
        };
        runs.start_file(input.index_blank_labels);
        let reader = input.open(consumed.clone())?;
        let mut report = |statements: u64| {
            let fraction =
                total_size.map(|t| consumed.load(Ordering::Relaxed) as f64 / t.max(1) as f64);
            progress.statements(statements, fraction);
        };
        if input.format.is_line_based() {
            load_lines(
                input,
                reader,
                graph,
                memory,
                &mut runs,
                &mut errors,
                &mut report,
            )?;
        } else {
            load_turtle(input, reader, graph, &mut runs, &mut errors, &mut report)?;
        }
    }
    let statements = runs.statements;
    let blank_nodes = runs.blank_nodes;
    phases.push(("parse".to_owned(), phase_start.elapsed().as_secs_f64()));

    let finished_runs = runs.finish()?;
    let mut store = QuadStore::new(&work, memory / 2 / 32);
    let (vocabulary_terms, stats) = match finished_runs {
        runs::Runs::InMemory { keys, quads } => {
            // Final IDs are known already: compress the vocabulary while the
            // permutations are sorted, so neither waits for the other.
            progress.phase("vocabulary and permutations");
            let phase_start = Instant::now();
            store.extend(quads)?;
            let (vocabulary, stats) = rayon::join(
                || vocab_merge::write_sorted(keys, dir.path()),
                || quad_sort::write_permutations(store, dir.path()),
            );
            phases.push((
                "vocabulary and permutations".to_owned(),
                phase_start.elapsed().as_secs_f64(),
            ));
            (vocabulary?, stats?)
        }
        spilled => {
            progress.phase("vocabulary");
            let phase_start = Instant::now();
            let vocabulary = vocab_merge::merge(spilled, dir.path(), &mut store)?;
            phases.push(("vocabulary".to_owned(), phase_start.elapsed().as_secs_f64()));
            progress.phase("permutations");
            let phase_start = Instant::now();
            let stats = quad_sort::write_permutations(store, dir.path())?;
            phases.push((
                "permutations".to_owned(),
                phase_start.elapsed().as_secs_f64(),
            ));
            (vocabulary, stats)
        }
    };
    progress.end_line();

    let stats_path = dir.path().join(STATS_FILE);
    std::fs::write(
        &stats_path,
        serde_json::to_vec_pretty(&stats).expect("statistics serialize"),
    )
    .at(&stats_path)?;
    let (vocabulary_bytes, permutation_bytes) = file_sizes(dir.path())?;
    let index_bytes = vocabulary_bytes + permutation_bytes;
    let meta = IndexMeta {
        format_version: FORMAT_VERSION,
        index_id: random_id(),
        tern_version: env!("CARGO_PKG_VERSION").to_owned(),
        created: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        inputs: inputs.iter().map(Input::display_name).collect(),
        triples: stats.triples,
        vocabulary_terms,
        blank_nodes,
        distinct_terms: vocabulary_terms + blank_nodes + stats.distinct_inline_values,
        statements_read: statements,
        statements_skipped: errors.count,
        vocabulary_bytes,
        permutation_bytes,
        index_bytes,
        bytes_per_triple: index_bytes as f64 / stats.triples.max(1) as f64,
        phases,
        total_seconds: started.elapsed().as_secs_f64(),
    };
    let meta_path = dir.path().join(META_FILE);
    std::fs::write(
        &meta_path,
        serde_json::to_vec_pretty(&meta).expect("metadata serializes"),
    )
    .at(&meta_path)?;
    dir.commit()?;
    Ok(LoadReport {
        meta,
        first_errors: errors.first,
    })
}

/// Bad statements seen so far: the first stops a strict load.
struct ErrorLog {
    lenient: bool,
    count: u64,
    first: Vec<SyntaxError>,
}

impl ErrorLog {
    fn new(lenient: bool) -> ErrorLog {
        ErrorLog {
            lenient,
            count: 0,
            first: Vec::new(),
        }
    }

    fn record(&mut self, errors: Vec<SyntaxError>) -> Result<(), LoadError> {
        for e in errors {
            if !self.lenient {
                return Err(LoadError::Syntax(e));
            }
            self.count += 1;
            if self.first.len() < REPORTED_ERRORS {
                self.first.push(e);
            }
        }
        Ok(())
    }
}

fn merge_pieces(
    pieces: Vec<Piece>,
    runs: &mut RunBuilder,
    errors: &mut ErrorLog,
) -> Result<(), LoadError> {
    for mut piece in pieces {
        let piece_errors = std::mem::take(&mut piece.errors);
        // A strict load stops at the first error, before anything after it.
        errors.record(piece_errors)?;
        runs.add(piece)?;
    }
    Ok(())
}

/// A chunk of whole lines and the 0-based number of its first line.
struct LineChunk {
    text: Vec<u8>,
    first_line: u64,
}

/// N-Triples and N-Quads: a reader thread cuts the decompressed text into chunks
/// of whole lines; each chunk is split into pieces parsed on all cores while the
/// previous chunk's pieces are merged into the runs.
fn load_lines(
    input: &Input,
    mut reader: Box<dyn Read + Send>,
    graph: Option<NamedNode>,
    memory: usize,
    runs: &mut RunBuilder,
    errors: &mut ErrorLog,
    report: &mut dyn FnMut(u64),
) -> Result<(), LoadError> {
    let chunk_size = (memory / 16).clamp(1 << 20, 32 << 20);
    let path = input.path_for_errors();
    let (sender, receiver) = std::sync::mpsc::sync_channel::<Result<LineChunk, LoadError>>(1);
    // Parsed chunks come back for reuse: fresh buffers of this size would cost a
    // page fault per 4 KiB every time.
    let (recycle, recycled) = std::sync::mpsc::channel::<Vec<u8>>();
    // A line must fit in a quarter of the budget (it is read, parsed and its
    // terms copied); longer ones stop the load with their position.
    let longest_line = (memory / 4).max(chunk_size);
    let file_name = input.display_name();
    let reader_thread = std::thread::spawn(move || {
        let mut carry: Vec<u8> = Vec::new();
        let mut line = 0u64;
        loop {
            let mut text = recycled.try_recv().unwrap_or_default();
            text.clear();
            text.extend_from_slice(&carry);
            // Read a chunk's worth past a carried partial line, or as much
            // again as a long carried line: a line of any length is read in
            // a number of steps logarithmic in its length.
            let target = chunk_size.max(carry.len() * 2);
            carry.clear();
            text.reserve(target.saturating_sub(text.len()));
            let mut eof = false;
            while text.len() < target {
                let len = text.len();
                text.resize(len + (target - len).max(64 << 10), 0);
                match reader.read(&mut text[len..]) {
                    Ok(0) => {
                        text.truncate(len);
                        eof = true;
                        break;
                    }
                    Ok(n) => text.truncate(len + n),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => text.truncate(len),
                    Err(e) => {
                        let _ = sender.send(Err(LoadError::Io { path, source: e }));
                        return;
                    }
                }
            }
            if !eof {
                // Keep the partial last line for the next chunk.
                match memchr::memrchr(b'\n', &text) {
                    Some(end) => {
                        carry.extend_from_slice(&text[end + 1..]);
                        text.truncate(end + 1);
                    }
                    None if text.len() > longest_line => {
                        let _ = sender.send(Err(LoadError::Syntax(SyntaxError {
                            file: file_name,
                            line: line + 1,
                            column: 1,
                            message: format!(
                                "this line is longer than {longest_line} bytes, a quarter of \
                                 the loader's --memory; give it more memory to load it"
                            ),
                        })));
                        return;
                    }
                    None => {
                        carry = text;
                        continue;
                    }
                }
            }
            let lines = memchr::memchr_iter(b'\n', &text).count() as u64;
            if !text.is_empty()
                && sender
                    .send(Ok(LineChunk {
                        text,
                        first_line: line,
                    }))
                    .is_err()
            {
                return;
            }
            line += lines;
            if eof {
                return;
            }
        }
    });

    let file = input.display_name();
    let pieces_per_chunk = rayon::current_num_threads() * 4;
    let mut pending: Vec<Piece> = Vec::new();
    let stop_at_first_error = !errors.lenient;
    let mut result = Ok(());
    for chunk in receiver.iter() {
        let chunk = match chunk {
            Ok(c) => c,
            Err(e) => {
                result = Err(e);
                break;
            }
        };
        let slices = split_lines(&chunk.text, pieces_per_chunk, chunk.first_line);
        let (merged, parsed) = rayon::join(
            || merge_pieces(std::mem::take(&mut pending), runs, errors),
            || {
                slices
                    .par_iter()
                    .map(|(slice, first_line)| {
                        piece::parse_lines(
                            slice,
                            input.format,
                            &file,
                            *first_line,
                            graph.as_ref(),
                            stop_at_first_error,
                        )
                    })
                    .collect::<Vec<Piece>>()
            },
        );
        if let Err(e) = merged {
            result = Err(e);
            break;
        }
        pending = parsed;
        let _ = recycle.send(chunk.text);
        report(runs.statements);
    }
    if result.is_ok() {
        result = merge_pieces(pending, runs, errors);
    }
    drop(receiver);
    let _ = reader_thread.join();
    report(runs.statements);
    result
}

/// Cuts `text` into about `parts` slices at line ends, with each slice's first line.
fn split_lines(text: &[u8], parts: usize, first_line: u64) -> Vec<(&[u8], u64)> {
    let target = (text.len() / parts.max(1)).max(1 << 16);
    let mut slices = Vec::with_capacity(parts);
    let mut start = 0;
    let mut line = first_line;
    while start < text.len() {
        let end = if start + target >= text.len() {
            text.len()
        } else {
            memchr::memchr(b'\n', &text[start + target..])
                .map_or(text.len(), |i| start + target + i + 1)
        };
        slices.push((&text[start..end], line));
        line += memchr::memchr_iter(b'\n', &text[start..end]).count() as u64;
        start = end;
    }
    slices
}

/// Turtle and TriG parse on one thread; batches of statements are encoded on all
/// cores.
fn load_turtle(
    input: &Input,
    reader: Box<dyn Read + Send>,
    graph: Option<NamedNode>,
    runs: &mut RunBuilder,
    errors: &mut ErrorLog,
    report: &mut dyn FnMut(u64),
) -> Result<(), LoadError> {
    let file = input.display_name();
    let base = match &input.source {
        Source::File(p) => std::fs::canonicalize(p)
            .ok()
            .and_then(|p| p.to_str().map(|s| format!("file://{s}"))),
        Source::Stdin => None,
    };
    let base_error = |b: &String, e: oxrdf::IriParseError| LoadError::InvalidGraph {
        iri: b.clone(),
        message: e.to_string(),
    };
    let mut statements: Box<dyn Iterator<Item = Result<Quad, TurtleParseError>>> =
        match input.format {
            Format::TriG => {
                let mut parser = TriGParser::new();
                if let Some(b) = &base {
                    parser = parser
                        .with_base_iri(b.as_str())
                        .map_err(|e| base_error(b, e))?;
                }
                Box::new(parser.for_reader(reader))
            }
            _ => {
                let mut parser = TurtleParser::new();
                if let Some(b) = &base {
                    parser = parser
                        .with_base_iri(b.as_str())
                        .map_err(|e| base_error(b, e))?;
                }
                Box::new(
                    parser
                        .for_reader(reader)
                        .map(|r| r.map(|t| t.in_graph(oxrdf::GraphNameRef::DefaultGraph))),
                )
            }
        };
    let mut batch: Vec<Quad> = Vec::with_capacity(TURTLE_BATCH);
    let mut batch_errors = Vec::new();
    loop {
        let next = statements.next();
        let done = next.is_none();
        match next {
            Some(Ok(quad)) => batch.push(quad),
            Some(Err(TurtleParseError::Syntax(e))) => {
                batch_errors.push(piece::syntax_error(&file, 0, &e));
                if !errors.lenient {
                    // Everything before the error is irrelevant: the load stops.
                    return errors.record(batch_errors);
                }
            }
            Some(Err(TurtleParseError::Io(e))) if e.kind() == std::io::ErrorKind::OutOfMemory => {
                // oxttl reads a token into a buffer of at most 16 MiB.
                let statements = runs.statements + batch.len() as u64;
                return Err(LoadError::TermTooLong {
                    file,
                    statements,
                    message: e.to_string(),
                });
            }
            Some(Err(TurtleParseError::Io(e))) => {
                return Err(LoadError::Io {
                    path: input.path_for_errors(),
                    source: e,
                })
            }
            None => {}
        }
        if batch.len() >= TURTLE_BATCH || (done && !batch.is_empty()) {
            let parts = rayon::current_num_threads() * 2;
            let size = batch.len().div_ceil(parts);
            let pieces: Vec<Piece> = batch
                .par_chunks(size)
                .map(|quads| {
                    let mut encoder = PieceEncoder::new(graph.clone());
                    for q in quads {
                        encoder.push(q.as_ref());
                    }
                    encoder.finish()
                })
                .collect();
            batch.clear();
            errors.record(std::mem::take(&mut batch_errors))?;
            merge_pieces(pieces, runs, errors)?;
            report(runs.statements);
        }
        if done {
            return errors.record(batch_errors);
        }
    }
}

/// Bytes of vocabulary files and of all other index files.
fn file_sizes(dir: &Path) -> Result<(u64, u64), LoadError> {
    let mut vocab = 0;
    let mut rest = 0;
    for entry in std::fs::read_dir(dir).at(dir)? {
        let entry = entry.at(dir)?;
        let meta = entry.metadata().at(entry.path())?;
        if !meta.is_file() {
            continue;
        }
        if entry.file_name().to_string_lossy().starts_with("vocab.") {
            vocab += meta.len();
        } else {
            rest += meta.len();
        }
    }
    Ok((vocab, rest))
}

/// 128 random bits as hex, from the OS.
fn random_id() -> String {
    let mut bytes = [0u8; 16];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        let _ = f.read_exact(&mut bytes);
    }
    if bytes == [0; 16] {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes = (nanos ^ u128::from(std::process::id())).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
