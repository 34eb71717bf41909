use crate::size::parse_size;
use anyhow::{bail, Context, Result};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tern_engine::{Engine, EngineOptions, QueryOutcome};
use tern_export::{GraphFormat, SolutionsFormat};
use tern_index::Index;

#[derive(Args)]
pub struct QueryArgs {
    /// Directory of the index.
    #[arg(long)]
    index: PathBuf,
    /// Output format: json, xml, csv, tsv (SELECT/ASK); turtle, ntriples (CONSTRUCT/DESCRIBE).
    #[arg(long)]
    format: Option<String>,
    /// Stop the query after this many seconds.
    #[arg(long)]
    timeout: Option<f64>,
    /// Memory budget for the query's materialized state, e.g. 512M.
    #[arg(long, value_parser = parse_size)]
    memory: Option<u64>,
    /// Read the query from a file.
    #[arg(long, conflicts_with = "query")]
    file: Option<PathBuf>,
    /// The SPARQL query.
    query: Option<String>,
}

pub fn run(args: QueryArgs) -> Result<()> {
    let text = match (&args.query, &args.file) {
        (Some(q), _) => q.clone(),
        (None, Some(f)) => {
            std::fs::read_to_string(f).with_context(|| format!("{}", f.display()))?
        }
        (None, None) => bail!("give a query, or --file FILE"),
    };
    let index = Arc::new(Index::open(&args.index)?);
    let engine = Engine::new(
        index,
        EngineOptions {
            timeout: args.timeout.map(Duration::from_secs_f64),
            memory_budget: args.memory,
            ..EngineOptions::default()
        },
    );
    let outcome = engine.query(&text, None)?;
    let stdout = std::io::stdout().lock();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout);
    let format = args.format.as_deref().map(str::to_ascii_lowercase);
    match outcome {
        QueryOutcome::Solutions { variables, rows } => {
            tern_export::write_solutions(
                &mut out,
                solutions_format(format.as_deref())?,
                &variables,
                rows,
            )?;
        }
        QueryOutcome::Boolean(value) => {
            tern_export::write_boolean(&mut out, solutions_format(format.as_deref())?, value)?;
        }
        QueryOutcome::Graph(triples) => {
            let format = match format.as_deref() {
                None | Some("turtle" | "ttl") => GraphFormat::Turtle,
                Some("ntriples" | "nt") => GraphFormat::NTriples,
                Some(other) => {
                    bail!("{other:?} is not a format for graphs (use turtle or ntriples)")
                }
            };
            tern_export::write_graph(&mut out, format, triples)?;
        }
    }
    match out.flush() {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

fn solutions_format(name: Option<&str>) -> Result<SolutionsFormat> {
    Ok(match name {
        None | Some("tsv") => SolutionsFormat::Tsv,
        Some("json") => SolutionsFormat::Json,
        Some("xml") => SolutionsFormat::Xml,
        Some("csv") => SolutionsFormat::Csv,
        Some(other) => bail!("{other:?} is not a format for solutions (use json, xml, csv or tsv)"),
    })
}
