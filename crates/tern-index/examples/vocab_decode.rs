//! Measures turning IDs back into terms on an index built by `tern load`:
//!
//! ```text
//! cargo run --release -p tern-index --example vocab_decode -- /tmp/vx-bsbm [rounds] [section...]
//! ```
//!
//! Sections (all by default):
//!
//! * `blocks`: every vocabulary entry once, block by block in order, cold
//!   cache (µs per main block with the long keys it refers to, MB/s of key
//!   bytes, keys/s);
//! * `random`: 16 batches of 4,096 random vocabulary IDs: `key_refs` with a
//!   warm cache, `terms_of` with a cold cache per batch and with a warm cache;
//! * `labels`: the subjects and labels of every `rdfs:label` triple through
//!   `terms_of` in batches of 4,096 rows, cold cache;
//! * `terms`, `refs`: every triple (SPO scan), each column of each batch
//!   of 4,096 rows through `terms_of` / `term_refs`, cold cache at the start;
//! * `export`: the same through `terms_of`, written out as tab-separated
//!   terms with `Display` (MB/s of output).
//!
//! Times are CPU time of the process (all threads: blocks missing from the
//! cache are decoded in parallel), median of `rounds` (default 5), with the
//! wall time of the same runs. `RAYON_NUM_THREADS=1` measures one core;
//! `VOCAB_CACHE_MB=64` sets the vocabulary cache's budget (that of `tern
//! serve`; the index's own default otherwise) and `CHUNK_ROWS` the rows
//! decoded at once by `terms` and `refs` (default 4,096; `tern serve`
//! decodes 16,384 at once).

use std::io::Write;
use std::time::Instant;
use tern_index::{Id, Index, Permutation, ScanRange, Tag};

/// CPU time of the whole process, from `/proc/self/task/*/schedstat` where
/// there is one (wall time elsewhere).
fn cpu_ns() -> u64 {
    let mut total = None;
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        for task in tasks.flatten() {
            let stat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
            if let Some(ns) = stat
                .split_whitespace()
                .next()
                .and_then(|t| t.parse::<u64>().ok())
            {
                *total.get_or_insert(0) += ns;
            }
        }
    }
    total.unwrap_or_else(|| {
        thread_local!(static START: Instant = Instant::now());
        START.with(|s| s.elapsed().as_nanos() as u64)
    })
}

/// Median CPU seconds of `rounds` runs of `f`, and the value of the last run;
/// prints the median wall time.
fn measure<T>(rounds: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut times = Vec::new();
    let mut walls = Vec::new();
    let mut last = None;
    for _ in 0..rounds {
        let (start, wall) = (cpu_ns(), Instant::now());
        last = Some(f());
        times.push((cpu_ns() - start) as f64 / 1e9);
        walls.push(wall.elapsed().as_secs_f64());
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    walls.sort_by(|a, b| a.partial_cmp(b).unwrap());
    print!("[wall {:7.1} ms] ", walls[walls.len() / 2] * 1e3);
    (times[times.len() / 2], last.unwrap())
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .expect("usage: vocab_decode INDEX_DIR [rounds] [section...]");
    let rounds: usize = args.next().map_or(5, |r| r.parse().expect("rounds"));
    let sections: Vec<String> = args.collect();
    let run = |name: &str| sections.is_empty() || sections.iter().any(|s| s == name);
    let index = Index::open(&dir).expect("open index");
    let vocab = index.vocabulary();
    let env = |name: &str| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
    };
    if let Some(mb) = env("VOCAB_CACHE_MB") {
        vocab.set_cache_budget(mb << 20);
    }
    let chunk_rows = env("CHUNK_ROWS").unwrap_or(4096);
    println!(
        "{dir}: {} vocabulary entries in {} blocks, vocabulary {:.2} MB, index {:.2} MB",
        vocab.len(),
        vocab.block_count(),
        vocab.disk_bytes() as f64 / 1e6,
        index.meta().index_bytes as f64 / 1e6,
    );

    if run("blocks") {
        let (secs, (key_bytes, keys)) = measure(rounds, || {
            vocab.clear_cache();
            let (mut bytes, mut keys) = (0, 0);
            for b in 0..vocab.block_count() {
                let range: Vec<u64> = vocab.block_range(b).collect();
                for key in vocab.key_refs(&range).expect("keys").iter() {
                    bytes += key.len();
                    keys += 1;
                }
            }
            (bytes, keys)
        });
        println!(
            "blocks:  {:.1} µs/block, {:.0} MB/s of keys ({:.1} MB), {:.2} M keys/s, {:.3} s",
            secs * 1e6 / vocab.block_count() as f64,
            key_bytes as f64 / secs / 1e6,
            key_bytes as f64 / 1e6,
            keys as f64 / secs / 1e6,
            secs
        );
    }

    if run("random") {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let batches: Vec<Vec<Id>> = (0..16)
            .map(|_| {
                (0..4096)
                    .map(|_| Id::vocab(rng.next() % vocab.len()))
                    .collect()
            })
            .collect();
        let terms = (batches.len() * 4096) as f64;
        let per_batch = |secs: f64| secs * 1e3 / batches.len() as f64;
        let (cold, _) = measure(rounds, || {
            for batch in &batches {
                vocab.clear_cache();
                index.terms_of(batch).expect("terms");
            }
        });
        println!(
            "random:  terms_of, cold cache: {:.2} ms/batch ({:.2} M terms/s)",
            per_batch(cold),
            terms / cold / 1e6
        );
        let (warm, _) = measure(rounds, || {
            for batch in &batches {
                index.terms_of(batch).expect("terms");
            }
        });
        println!(
            "random:  terms_of, warm cache: {:.2} ms/batch ({:.2} M terms/s), {:.1} MB of decoded blocks",
            per_batch(warm),
            terms / warm / 1e6,
            vocab.cache_bytes() as f64 / 1e6
        );
        let (refs, key_bytes) = measure(rounds, || {
            let mut bytes = 0;
            for batch in &batches {
                let indexes: Vec<u64> = batch.iter().map(|id| id.payload()).collect();
                let keys = vocab.key_refs(&indexes).expect("keys");
                bytes += keys.iter().map(<[u8]>::len).sum::<usize>();
            }
            bytes
        });
        println!(
            "random:  key_refs, warm cache: {:.2} ms/batch ({:.2} M keys/s, {:.0} MB/s)",
            per_batch(refs),
            terms / refs / 1e6,
            key_bytes as f64 / refs / 1e6
        );
    }

    let label = oxrdf::NamedNode::new_unchecked("http://www.w3.org/2000/01/rdf-schema#label");
    let label = index.id_of(label.as_ref().into()).expect("id_of");
    if let Some(p) = label.filter(|_| run("labels")) {
        let mut rows: Vec<[Id; 2]> = Vec::new();
        for batch in index.scan(Permutation::Pso, &[p], ScanRange::ALL) {
            let batch = batch.expect("scan");
            for i in 0..batch.len() {
                rows.push([batch.columns[1][i], batch.columns[2][i]]);
            }
        }
        let (secs, blocks) = measure(rounds, || {
            vocab.clear_cache();
            let mut blocks = std::collections::HashSet::new();
            for chunk in rows.chunks(4096) {
                let ids: Vec<Id> = chunk.iter().flatten().copied().collect();
                for id in &ids {
                    if id.tag() == Tag::Vocab {
                        blocks.insert(vocab.block_of(id.payload()));
                    }
                }
                index.terms_of(&ids).expect("terms");
            }
            blocks.len()
        });
        println!(
            "labels:  {} rows, {} main blocks touched, {:.1} ms",
            rows.len(),
            blocks,
            secs * 1e3
        );
    }

    if run("terms") {
        let (secs, terms) = measure(rounds.min(3), || {
            vocab.clear_cache();
            let mut terms = 0;
            for batch in index.scan(Permutation::Spo, &[], ScanRange::ALL) {
                let batch = batch.expect("scan");
                for column in &batch.columns[..3] {
                    for chunk in column.chunks(chunk_rows) {
                        terms += index.terms_of(chunk).expect("terms").len();
                    }
                }
            }
            terms
        });
        println!(
            "terms:   every triple through terms_of: {:.2} s, {:.2} M terms/s",
            secs,
            terms as f64 / secs / 1e6
        );
    }

    if run("refs") {
        let (secs, (terms, bytes)) = measure(rounds.min(3), || {
            vocab.clear_cache();
            let (mut terms, mut bytes) = (0, 0);
            // Rows gathered across scan batches, as `tern serve` gathers
            // them, each column decoded at once.
            let mut gathered: [Vec<Id>; 3] = Default::default();
            let mut decode = |gathered: &mut [Vec<Id>; 3]| {
                for column in gathered.iter_mut() {
                    let refs = index.term_refs(column).expect("terms");
                    terms += refs.len();
                    for term in refs.iter() {
                        bytes += match term.expect("a term") {
                            oxrdf::TermRef::NamedNode(n) => n.as_str().len(),
                            oxrdf::TermRef::Literal(l) => l.value().len(),
                            _ => 1,
                        };
                    }
                    column.clear();
                }
            };
            for batch in index.scan(Permutation::Spo, &[], ScanRange::ALL) {
                let batch = batch.expect("scan");
                for (into, column) in gathered.iter_mut().zip(&batch.columns[..3]) {
                    into.extend_from_slice(column);
                }
                if gathered[0].len() >= chunk_rows {
                    decode(&mut gathered);
                }
            }
            decode(&mut gathered);
            (terms, bytes)
        });
        println!(
            "refs:    every triple through term_refs: {:.2} s, {:.2} M terms/s ({:.0} MB/s of IRIs and values)",
            secs,
            terms as f64 / secs / 1e6,
            bytes as f64 / secs / 1e6
        );
    }

    if run("export") {
        let (secs, (out_bytes, triples)) = measure(rounds.min(3), || {
            vocab.clear_cache();
            let mut out = Vec::with_capacity(1 << 20);
            let (mut bytes, mut triples) = (0, 0);
            for batch in index.scan(Permutation::Spo, &[], ScanRange::ALL) {
                let batch = batch.expect("scan");
                let columns: Vec<Vec<Option<oxrdf::Term>>> = batch.columns[..3]
                    .iter()
                    .map(|c| index.terms_of(c).expect("terms"))
                    .collect();
                for i in 0..batch.len() {
                    for (c, column) in columns.iter().enumerate() {
                        let sep = if c == 2 { '\n' } else { '\t' };
                        write!(out, "{}{sep}", column[i].as_ref().unwrap()).unwrap();
                    }
                    if out.len() > (1 << 20) - 4096 {
                        bytes += out.len();
                        out.clear();
                    }
                }
                triples += batch.len();
            }
            (bytes + out.len(), triples)
        });
        println!(
            "export:  {} triples, {:.1} MB of TSV in {:.2} s: {:.0} MB/s, {:.2} M terms/s",
            triples,
            out_bytes as f64 / 1e6,
            secs,
            out_bytes as f64 / secs / 1e6,
            3.0 * triples as f64 / secs / 1e6
        );
    }
}
