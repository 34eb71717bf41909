use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use tern_index::Id;

#[derive(Args)]
pub struct StatsArgs {
    /// Directory of the index.
    #[arg(long)]
    index: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: StatsArgs) -> Result<()> {
    let store = crate::store::open_read_only(&args.index, None)?;
    let index = store.snapshot();
    let status = store.status();
    let meta = index.meta();
    let stats = index.stats();
    let ids: Vec<Id> = stats.predicates.iter().map(|p| Id(p.predicate)).collect();
    let names: Vec<String> = index
        .terms_of(&ids)?
        .into_iter()
        .map(|t| t.map_or_else(|| "?".to_owned(), |t| t.to_string()))
        .collect();
    if args.json {
        let predicates: Vec<serde_json::Value> = stats
            .predicates
            .iter()
            .zip(&names)
            .map(|(p, name)| {
                serde_json::json!({
                    "predicate": name,
                    "triples": p.triples,
                    "distinct_subjects": p.distinct_subjects,
                    "distinct_objects": p.distinct_objects,
                })
            })
            .collect();
        let mut value = serde_json::to_value(meta)?;
        let object = value.as_object_mut().expect("metadata is an object");
        object.insert("distinct_subjects".into(), stats.distinct_subjects.into());
        object.insert(
            "distinct_predicates".into(),
            stats.distinct_predicates.into(),
        );
        object.insert("distinct_objects".into(), stats.distinct_objects.into());
        object.insert("named_graphs".into(), stats.named_graphs.into());
        object.insert("predicates".into(), predicates.into());
        object.insert(
            "store".into(),
            serde_json::json!({
                "snapshot": status.snapshot,
                "version": status.version,
                "delta_quads": status.delta_changes,
                "delta_runs": status.delta_runs,
                "delta_terms": status.delta_terms,
                "delta_bytes": status.delta_bytes,
                "wal_bytes": status.wal_bytes,
                "quads": stats.triples,
            }),
        );
        return emit(&(serde_json::to_string_pretty(&value)? + "\n"));
    }
    use std::fmt::Write;
    use tern_index::builder::group;
    let mut out = String::new();
    writeln!(out, "index        {}", args.index.display())?;
    writeln!(out, "id           {}", meta.index_id)?;
    writeln!(out, "inputs       {}", meta.inputs.join(", "))?;
    writeln!(out, "triples      {}", group(meta.triples))?;
    writeln!(
        out,
        "terms        {} distinct ({} vocabulary, {} blank nodes)",
        group(meta.distinct_terms),
        group(meta.vocabulary_terms),
        group(meta.blank_nodes)
    )?;
    writeln!(
        out,
        "subjects     {}   predicates {}   objects {}   named graphs {}",
        group(stats.distinct_subjects),
        group(stats.distinct_predicates),
        group(stats.distinct_objects),
        group(stats.named_graphs)
    )?;
    writeln!(
        out,
        "size         {} bytes ({:.1} bytes/triple)",
        group(meta.index_bytes),
        meta.bytes_per_triple
    )?;
    writeln!(out, "build time   {:.2}s", meta.total_seconds)?;
    writeln!(
        out,
        "updates      {} since the base ({} quads now; delta {} quads in {} runs, {} new terms; log {} bytes)",
        group(status.version),
        group(stats.triples),
        group(status.delta_changes as u64),
        status.delta_runs,
        group(status.delta_terms),
        group(status.wal_bytes)
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "{:>12} {:>12} {:>12}  predicate",
        "triples", "subjects", "objects"
    )?;
    let mut order: Vec<usize> = (0..stats.predicates.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(stats.predicates[i].triples));
    for i in order {
        let p = &stats.predicates[i];
        writeln!(
            out,
            "{:>12} {:>12} {:>12}  {}",
            group(p.triples),
            group(p.distinct_subjects),
            group(p.distinct_objects),
            names[i]
        )?;
    }
    emit(&out)
}

/// Writes to stdout; a closed pipe (`tern stats | head`) is not an error.
fn emit(text: &str) -> Result<()> {
    use std::io::Write;
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}
