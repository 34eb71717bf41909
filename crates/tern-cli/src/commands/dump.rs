//! `tern dump`: the whole store (or one graph) as N-Quads, N-Triples,
//! Turtle or Parquet, straight from the SPO permutation: no query engine in
//! between. Rows are read a window at a time, each column decoded whole
//! (the vocabulary is then read in its own order, see
//! `tern_index::Vocabulary::key_refs`) and the window formatted on all
//! cores, one run per core, its bytes written in order; memory holds a
//! window, whatever the store's size. Parquet is written by one core (a row
//! group at a time) with the typed columns of the endpoint's Parquet
//! results: `subject`, `predicate`, `object` and `graph` (unbound in the
//! default graph).

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use oxrdf::{NamedOrBlankNodeRef, TermRef, TripleRef, Variable};
use rayon::prelude::*;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;
use tern_export::term::{write_iri, write_nt_term};
use tern_export::{ArrowWriter, GraphFormat, GraphWriter, Prefixes, SolutionsWriter};
use tern_index::{Id, Permutation, ScanRange, Snapshot, TermRefs};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DumpFormat {
    /// N-Quads: every quad of the store, named graphs included.
    Nq,
    /// N-Triples: the triples of one graph.
    Nt,
    /// Turtle: the triples of one graph, grouped by subject.
    Ttl,
    /// Apache Parquet: every quad as a row (subject, predicate, object,
    /// graph), the columns typed as the endpoint's Parquet results.
    Parquet,
}

#[derive(Args)]
pub struct DumpArgs {
    /// Directory of the index.
    #[arg(long)]
    index: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DumpFormat::Nq)]
    format: DumpFormat,
    /// The graph to dump, for N-Triples and Turtle (default: the default
    /// graph); with N-Quads, only this graph's quads.
    #[arg(long, value_name = "IRI")]
    graph: Option<String>,
    /// Write here instead of to standard output (compress by piping, e.g.
    /// `tern dump --index DIR | zstd -T0 > data.nq.zst`).
    #[arg(long, short)]
    output: Option<PathBuf>,
    #[command(flatten)]
    cache: crate::cache::CacheArgs,
}

/// Rows decoded and formatted at once: a window per core is in flight, and
/// one more (N-Quads of BSBM take about 8 MB per 16K rows, decoded and
/// written).
const WINDOW_ROWS: usize = 32 * 1024;
/// Decoded windows waiting to be formatted.
const WINDOWS_AHEAD: usize = 2;

pub fn run(args: DumpArgs) -> Result<()> {
    let store = crate::store::open_read_only(&args.index, Some(args.cache))?;
    let snapshot = store.snapshot();
    let graph = match &args.graph {
        None => None,
        Some(iri) => {
            let node = oxrdf::NamedNode::new(iri.as_str()).context("--graph")?;
            match snapshot.id_of(TermRef::NamedNode(node.as_ref()))? {
                Some(id) if id != Id::DEFAULT_GRAPH => Some(id),
                // A graph the store does not name holds nothing.
                _ => {
                    say!("the store has no graph <{iri}>: nothing to dump");
                    None
                }
            }
        }
    };
    // N-Triples and Turtle hold one graph: the default one unless asked.
    let only = match args.format {
        DumpFormat::Nq | DumpFormat::Parquet => graph,
        DumpFormat::Nt | DumpFormat::Ttl => Some(graph.unwrap_or(Id::DEFAULT_GRAPH)),
    };
    let out: Box<dyn Write> = match &args.output {
        Some(path) => {
            Box::new(std::fs::File::create(path).with_context(|| format!("{}", path.display()))?)
        }
        None => Box::new(std::io::stdout().lock()),
    };
    let mut out = std::io::BufWriter::with_capacity(1 << 20, out);
    let started = Instant::now();
    let missing = args.graph.is_some() && graph.is_none();
    let (quads, bytes) = if missing {
        (0, 0)
    } else {
        dump(&snapshot, args.format, only, &mut out)?
    };
    out.flush().context("writing the dump")?;
    let seconds = started.elapsed().as_secs_f64();
    let unit = match args.format {
        DumpFormat::Nq | DumpFormat::Parquet => "quads",
        DumpFormat::Nt | DumpFormat::Ttl => "triples",
    };
    say!(
        "dumped {quads} {unit} ({:.1} MB) in {seconds:.2} s: {:.0} MB/s, {:.2} M {unit}/s",
        bytes as f64 / 1e6,
        bytes as f64 / 1e6 / seconds.max(1e-9),
        quads as f64 / 1e6 / seconds.max(1e-9),
    );
    Ok(())
}

/// Writes the quads of `snapshot` (only those of graph `only`, if given);
/// returns how many and the bytes written.
fn dump(
    snapshot: &Snapshot,
    format: DumpFormat,
    only: Option<Id>,
    out: &mut impl Write,
) -> Result<(u64, u64)> {
    let mut writer: Box<dyn GraphWriter> = match format {
        DumpFormat::Ttl => {
            let mut prefixes = Prefixes::well_known();
            prefixes.add_namespaces(&snapshot.base().frequent_namespaces()?);
            GraphFormat::Turtle.writer(prefixes)
        }
        DumpFormat::Nt | DumpFormat::Nq => GraphFormat::NTriples.writer(Prefixes::well_known()),
        DumpFormat::Parquet => return dump_parquet(snapshot, only, out),
    };
    let mut head = Vec::new();
    writer.header(&mut head);
    out.write_all(&head)?;
    let mut bytes = head.len() as u64;
    let with_graph = format == DumpFormat::Nq;
    let quads = for_each_written_window(snapshot, only, with_graph, writer.as_mut(), |buf| {
        out.write_all(buf).context("writing the dump")?;
        bytes += buf.len() as u64;
        Ok(())
    })?;
    let mut tail = Vec::new();
    writer.footer(&mut tail);
    out.write_all(&tail)?;
    bytes += tail.len() as u64;
    Ok((quads, bytes))
}

/// The quads as Parquet rows; returns how many and the bytes written.
fn dump_parquet(snapshot: &Snapshot, only: Option<Id>, out: &mut impl Write) -> Result<(u64, u64)> {
    let mut writer = ArrowWriter::parquet();
    let variables = ["subject", "predicate", "object", "graph"].map(Variable::new_unchecked);
    let mut buf = Vec::new();
    writer.header(&mut buf, &variables);
    let mut bytes = 0u64;
    let quads = for_each_decoded_window(snapshot, only, 4, |graphs, decoded| {
        let mut row: Vec<Option<TermRef<'_>>> = Vec::with_capacity(4);
        for (i, &graph) in graphs.iter().enumerate() {
            row.clear();
            for (c, column) in decoded.iter().enumerate() {
                let term = column.get(i);
                if term.is_none() && c < 3 {
                    bail!("the index holds a quad whose terms do not decode");
                }
                // The default graph is no graph: unbound.
                row.push(term.filter(|_| c < 3 || graph != Id::DEFAULT_GRAPH));
            }
            writer.row(&mut buf, &row);
            if !buf.is_empty() {
                out.write_all(&buf).context("writing the dump")?;
                bytes += buf.len() as u64;
                buf.clear();
            }
        }
        Ok(())
    })?;
    writer.footer(&mut buf);
    out.write_all(&buf).context("writing the dump")?;
    bytes += buf.len() as u64;
    Ok((quads, bytes))
}

/// [`for_each_window`] with the first `columns` columns of each window
/// decoded (each whole, on all cores), read and decoded on another thread
/// while `each` formats the window before: the serial parts of the two
/// (reading the permutation, writing out) overlap, and at most
/// [`WINDOWS_AHEAD`] decoded windows wait. `each` gets the window's graph
/// column and its decoded columns.
fn for_each_decoded_window(
    snapshot: &Snapshot,
    only: Option<Id>,
    columns: usize,
    mut each: impl FnMut(&[Id], &[TermRefs]) -> Result<()>,
) -> Result<u64> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<(Vec<Id>, Vec<TermRefs>)>(WINDOWS_AHEAD);
    std::thread::scope(|scope| {
        let reader = scope.spawn(move || {
            for_each_window(snapshot, only, |window| {
                let decoded: Vec<TermRefs> = window[..columns]
                    .par_iter()
                    .map(|ids| snapshot.term_refs(ids))
                    .collect::<Result<_, _>>()?;
                // A closed channel means `each` failed: stop reading (its
                // error is the one reported).
                if tx.send((window[3].clone(), decoded)).is_err() {
                    bail!("the dump's writer stopped");
                }
                Ok(())
            })
        });
        for (graphs, decoded) in rx {
            each(&graphs, &decoded)?;
        }
        reader.join().expect("the dump's reader does not panic")
    })
}

/// Reads the quads in SPO order (those of graph `only`, if given) and
/// hands them to `each` a window of [`WINDOW_ROWS`] rows at a time, as
/// four columns; returns how many quads there were.
fn for_each_window(
    snapshot: &Snapshot,
    only: Option<Id>,
    mut each: impl FnMut(&[Vec<Id>; 4]) -> Result<()>,
) -> Result<u64> {
    let mut quads = 0u64;
    let mut window: [Vec<Id>; 4] = Default::default();
    let mut scan = snapshot.scan(Permutation::Spo, &[], ScanRange::ALL);
    loop {
        let batch = scan.next().transpose()?;
        let ended = batch.is_none();
        if let Some(batch) = batch {
            for row in 0..batch.len() {
                let g = batch.columns[3][row];
                if only.is_some_and(|only| only != g) {
                    continue;
                }
                for (column, values) in window.iter_mut().zip(&batch.columns) {
                    column.push(values[row]);
                }
            }
        }
        let rows = window[0].len();
        if rows == 0 && ended {
            break;
        }
        if rows < WINDOW_ROWS && !ended {
            continue;
        }
        each(&window)?;
        quads += rows as u64;
        window.iter_mut().for_each(Vec::clear);
        if ended {
            break;
        }
    }
    Ok(quads)
}

/// Reads the quads (those of graph `only`, if given) a window at a time
/// and has each window decoded and written whole by a fork of `writer` on
/// a lane (a pool of one thread, one per core), several windows at once;
/// `each` gets their bytes in order. Returns how many quads there were.
///
/// A window per core, rather than each window's columns decoded side by
/// side and its rows written in a run per core: the cores then waited for
/// each other at every step, and their threads slept and woke thousands of
/// times a second (the same was measured in the endpoint's exports, see
/// `tern-server`'s `batch_pipeline`). On a lane, the parallel loops inside
/// the vocabulary's decoding run inline.
fn for_each_written_window(
    snapshot: &Snapshot,
    only: Option<Id>,
    with_graph: bool,
    writer: &mut dyn GraphWriter,
    mut each: impl FnMut(&[u8]) -> Result<()>,
) -> Result<u64> {
    let lanes = (0..rayon::current_num_threads().clamp(1, 16))
        .map(|lane| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .thread_name(move |_| format!("tern-dump-{lane}"))
                .build()
        })
        .collect::<Result<Vec<_>, _>>()
        .context("starting the dump's threads")?;
    // Windows in flight, oldest first: each one's bytes once written.
    let (tx, rx) = std::sync::mpsc::sync_channel::<std::sync::mpsc::Receiver<Result<Vec<u8>>>>(
        lanes.len() - 1,
    );
    std::thread::scope(|scope| {
        let lanes = &lanes;
        let reader = scope.spawn(move || {
            let mut started = 0usize;
            for_each_window(snapshot, only, |window| {
                let Some(mut fork) = writer.fork() else {
                    bail!("this format cannot be written in parallel");
                };
                let (done, written) = std::sync::mpsc::sync_channel(1);
                let (snapshot, window) = (snapshot.clone(), window.clone());
                lanes[started % lanes.len()].spawn(move || {
                    // A panic in a pool's job would abort the process: it
                    // is reported as the dump's error instead.
                    let bytes = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        write_window(&snapshot, &window, with_graph, fork.as_mut())
                    }))
                    .unwrap_or_else(|_| {
                        Err(anyhow::anyhow!("writing a window of the dump panicked"))
                    });
                    // The writer gone means the dump failed: nothing to do.
                    let _ = done.send(bytes);
                });
                started += 1;
                // A closed channel means `each` failed: stop reading (its
                // error is the one reported).
                if tx.send(written).is_err() {
                    bail!("the dump's writer stopped");
                }
                Ok(())
            })
        });
        for written in rx {
            let bytes = written
                .recv()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("a window of the dump was lost")))?;
            each(&bytes)?;
        }
        reader.join().expect("the dump's reader does not panic")
    })
}

/// Decodes the columns of `window` it writes whole (the vocabulary is then
/// read in its own order) and writes its rows with `writer`: the graph too
/// if `with_graph`.
fn write_window(
    snapshot: &Snapshot,
    window: &[Vec<Id>; 4],
    with_graph: bool,
    writer: &mut dyn GraphWriter,
) -> Result<Vec<u8>> {
    let columns = if with_graph { 4 } else { 3 };
    let decoded: Vec<TermRefs> = window[..columns]
        .iter()
        .map(|ids| snapshot.term_refs(ids))
        .collect::<Result<_, _>>()?;
    let mut buf = Vec::new();
    for row in 0..decoded[0].len() {
        write_row(writer, &decoded, row, with_graph, &mut buf)?;
    }
    Ok(buf)
}

fn write_row(
    writer: &mut dyn GraphWriter,
    decoded: &[TermRefs],
    row: usize,
    with_graph: bool,
    buf: &mut Vec<u8>,
) -> Result<()> {
    let term = |c: usize| decoded[c].get(row);
    let (Some(s), Some(TermRef::NamedNode(p)), Some(o)) = (term(0), term(1), term(2)) else {
        bail!("the index holds a quad whose terms do not decode (row {row})");
    };
    let subject = match s {
        TermRef::NamedNode(n) => NamedOrBlankNodeRef::NamedNode(n),
        TermRef::BlankNode(b) => NamedOrBlankNodeRef::BlankNode(b),
        _ => bail!("the index holds a literal subject"),
    };
    if !with_graph {
        writer.triple(buf, TripleRef::new(subject, p, o))?;
        return Ok(());
    }
    // An N-Quads line: the triple, then the graph unless it is the default.
    write_nt_term(buf, s, false);
    buf.push(b' ');
    write_iri(buf, p.as_str());
    buf.push(b' ');
    write_nt_term(buf, o, false);
    if let Some(TermRef::NamedNode(graph)) = term(3) {
        buf.push(b' ');
        write_iri(buf, graph.as_str());
    }
    buf.extend_from_slice(b" .\n");
    Ok(())
}
