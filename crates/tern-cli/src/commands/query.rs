use crate::duration::parse_duration;
use crate::size::parse_size;
use anyhow::{bail, Context, Result};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tern_engine::{Engine, EngineOptions, QueryOutcome, QueryRequest};
use tern_export::{GraphFormat, SolutionsFormat};

#[derive(Args)]
pub struct QueryArgs {
    /// Directory of the index.
    #[arg(long)]
    index: PathBuf,
    /// Output format: json, xml, csv, tsv (SELECT/ASK); turtle, ntriples (CONSTRUCT/DESCRIBE).
    #[arg(long)]
    format: Option<String>,
    /// Stop the query after this many seconds.
    #[arg(long, value_parser = parse_duration)]
    timeout: Option<Duration>,
    /// Memory budget for the query's materialized state, e.g. 512M; sorts,
    /// groups and hash joins larger than it go to disk (--spill-dir).
    #[arg(long, value_parser = parse_size)]
    memory: Option<u64>,
    /// Directory for what does not fit in --memory (default: TMPDIR).
    #[arg(long)]
    spill_dir: Option<std::path::PathBuf>,
    /// Most cores the query uses at once (default: all).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    cores: Option<u16>,
    #[command(flatten)]
    cache: crate::cache::CacheArgs,
    /// Run the query, discard its results and print the plan with runtime
    /// information per operator (estimated and actual rows, time, blocks read).
    #[arg(long)]
    explain: bool,
    /// With --explain: run the query this many times first, unmeasured, so
    /// the plan shows warm-cache times (the first run reads the index and
    /// vocabulary from disk).
    #[arg(long, default_value_t = 0, requires = "explain")]
    warm: u32,
    /// Entailment regime: none, rdfs or owl-rl (see docs/inference.md).
    #[arg(long, value_name = "MODE")]
    inference: Option<tern_engine::Inference>,
    /// How owl:sameAs synonyms are answered under owl-rl: all or canonical.
    #[arg(long, value_name = "MODE")]
    sameas: Option<tern_engine::SameAsAnswers>,
    /// Memory for rows that inference derived, kept for later queries on
    /// the same snapshot (the instances of a class with every subclass,
    /// domain and range, read whole), e.g. 256M; 0 keeps nothing inference
    /// derived, not even rewritten queries. A write makes a new snapshot,
    /// whose queries derive them again.
    #[arg(long, value_parser = crate::size::parse_size, default_value = "256M")]
    extent_cache: u64,
    /// Read the inference schema from this named graph only.
    #[arg(long, value_name = "IRI")]
    schema_graph: Option<String>,
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
    let store = crate::store::open_read_only(&args.index, Some(args.cache))?;
    let engine = Engine::new(
        store,
        EngineOptions {
            timeout: args.timeout,
            memory_budget: args.memory,
            spill_dir: args.spill_dir.clone(),
            cores_per_query: args.cores.map(usize::from),
            inference: tern_engine::InferenceMode {
                regime: args.inference.unwrap_or_default(),
                same_as: args.sameas.unwrap_or_default(),
            },
            derived_extents: args.extent_cache,
            schema_graph: args
                .schema_graph
                .as_deref()
                .map(oxrdf::NamedNode::new)
                .transpose()
                .context("--schema-graph")?,
            ..EngineOptions::default()
        },
    );
    if args.explain {
        for _ in 0..args.warm {
            drain(engine.execute(&text, &QueryRequest::default())?.outcome)?;
        }
        return explain(&engine, &text);
    }
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

fn explain(engine: &Engine, text: &str) -> Result<()> {
    let started = Instant::now();
    let request = QueryRequest {
        profile: true,
        ..QueryRequest::default()
    };
    let execution = engine.execute(text, &request)?;
    let counted = Instant::now();
    let results = drain(execution.outcome)?;
    let timings = execution.timings;
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    print!("{}", execution.profile.snapshot().to_text());
    println!(
        "results {results}; parse {:.3} ms, plan {:.3} ms, execute {:.3} ms, total {:.3} ms",
        ms(timings.parse),
        ms(timings.plan),
        ms(counted.elapsed()),
        ms(started.elapsed())
    );
    Ok(())
}

/// Runs a query's results to the end; the number of results.
fn drain(outcome: QueryOutcome) -> Result<u64> {
    Ok(match outcome {
        QueryOutcome::Solutions { rows, .. } => {
            let mut n = 0;
            for row in rows {
                row?;
                n += 1;
            }
            n
        }
        QueryOutcome::Boolean(_) => 1,
        QueryOutcome::Graph(triples) => {
            let mut n = 0;
            for triple in triples {
                triple?;
                n += 1;
            }
            n
        }
    })
}
