use crate::size::{default_memory, human, parse_size};
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::PathBuf;
use tern_index::builder::{self, group, Compression, Format, Input, LoadOptions};

#[derive(Args)]
pub struct LoadArgs {
    /// Directory of the index to build.
    #[arg(long)]
    index: PathBuf,
    /// Memory budget of the builder, e.g. 64M or 4G (default: 40% of RAM).
    #[arg(long, value_parser = parse_size)]
    memory: Option<u64>,
    /// Skip bad statements (counted and reported) instead of stopping.
    #[arg(long)]
    lenient: bool,
    /// Replace an existing index.
    #[arg(long)]
    force: bool,
    /// Add the files to an existing index (and the updates it took): its
    /// current data and the files are built into a new base, swapped in
    /// atomically; the original source files are not read again. Needs the
    /// store's write lock (not while a server takes updates on it).
    #[arg(long, conflicts_with = "force")]
    append: bool,
    /// Graph that receives the triples of triples files (default: the default graph).
    #[arg(long, value_name = "IRI")]
    graph: Option<String>,
    /// Load a triples file into a named graph: --named IRI=FILE (repeatable).
    #[arg(long, value_name = "IRI=FILE")]
    named: Vec<String>,
    /// Format of all inputs (nt, nq, ttl, trig); required for `-` (stdin).
    #[arg(long)]
    format: Option<String>,
    /// No progress display.
    #[arg(long, short)]
    quiet: bool,
    /// Input files (.nt .nq .ttl .trig, optionally .gz or .zst); `-` is stdin.
    files: Vec<PathBuf>,
}

pub fn run(args: LoadArgs) -> Result<()> {
    let format = match &args.format {
        None => None,
        Some(f) => Some(
            Format::from_name(f)
                .with_context(|| format!("unknown format {f:?} (use nt, nq, ttl or trig)"))?,
        ),
    };
    let mut inputs = Vec::new();
    for file in &args.files {
        if file.as_os_str() == "-" {
            let format = format.context("reading stdin (`-`) needs --format")?;
            inputs.push(Input::stdin(format, Compression::None, args.graph.clone()));
        } else {
            inputs.push(Input::file(file, format, args.graph.clone())?);
        }
    }
    for named in &args.named {
        let (iri, file) = named
            .split_once('=')
            .with_context(|| format!("--named takes IRI=FILE, got {named:?}"))?;
        inputs.push(Input::file(file, format, Some(iri.to_owned()))?);
    }
    if inputs.is_empty() {
        bail!("no input files given");
    }
    if args.append {
        return append(&args, inputs);
    }
    // Replacing a store that a server writes would pull its data away
    // under it: take the store's write lock first (a store that was never
    // written has no lock file, and none is made here).
    let _lock = if args.force && args.index.join("store.lock").is_file() {
        Some(
            tern_index::store::lock(&args.index)
                .with_context(|| format!("{}", args.index.display()))?,
        )
    } else {
        None
    };
    let options = LoadOptions {
        memory: args.memory.unwrap_or_else(default_memory),
        lenient: args.lenient,
        force: args.force,
        progress: !args.quiet,
    };
    let report = builder::build(&args.index, &inputs, &options)?;
    let m = &report.meta;
    if m.statements_skipped > 0 {
        say!(
            "Skipped {} bad statements; the first ones:",
            group(m.statements_skipped)
        );
        for e in &report.first_errors {
            say!("  {e}");
        }
    }
    let rate = m.statements_read as f64 / m.total_seconds.max(1e-9);
    say!(
        "Loaded {} into {}",
        m.inputs.join(", "),
        args.index.display()
    );
    say!(
        "  triples: {} ({} statements read, {} skipped)",
        group(m.triples),
        group(m.statements_read),
        group(m.statements_skipped)
    );
    say!(
        "  distinct terms: {} ({} in the vocabulary, {} blank nodes)",
        group(m.distinct_terms),
        group(m.vocabulary_terms),
        group(m.blank_nodes)
    );
    let phases: Vec<String> = m
        .phases
        .iter()
        .map(|(name, s)| format!("{name} {s:.2}s"))
        .collect();
    say!(
        "  time: {:.2}s ({}), {} triples/s",
        m.total_seconds,
        phases.join(", "),
        group(rate as u64)
    );
    say!(
        "  index: {} (vocabulary {}, permutations {}), {:.1} bytes/triple",
        human(m.index_bytes),
        human(m.vocabulary_bytes),
        human(m.permutation_bytes),
        m.bytes_per_triple
    );
    Ok(())
}

/// `--append`: the store's data and the new files into a new base.
fn append(args: &LoadArgs, inputs: Vec<Input>) -> Result<()> {
    let options = tern_index::StoreOptions {
        compaction_memory: args.memory.unwrap_or_else(default_memory),
        compact_after: 0,
        ..tern_index::StoreOptions::default()
    };
    let store = tern_index::Store::open(&args.index, true, options)?;
    let before = store.snapshot().stats().triples;
    let report = store.append(inputs)?.context("nothing was appended")?;
    let after = store.snapshot();
    let m = after.meta();
    say!(
        "Appended to {}: {} quads before, {} after ({} new)",
        args.index.display(),
        group(before),
        group(m.triples),
        group(m.triples.saturating_sub(before))
    );
    say!(
        "  time: {:.2}s (writing the current data {:.2}s, building {:.2}s)",
        report.seconds,
        report.dump_seconds,
        report.build_seconds
    );
    say!(
        "  index: {}, {:.1} bytes/triple",
        human(m.index_bytes),
        m.bytes_per_triple
    );
    Ok(())
}
