//! The `tern` command.

mod cache;
mod commands;
mod malloc;
mod size;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "tern",
    version,
    about = "Tern: an RDF store and SPARQL 1.1 engine"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build an index from N-Triples, N-Quads, Turtle or TriG files.
    Load(commands::load::LoadArgs),
    /// Show an index's summary and per-predicate statistics.
    Stats(commands::stats::StatsArgs),
    /// Run a SPARQL query against an index and print the results.
    Query(commands::query::QueryArgs),
    /// Serve an index as a SPARQL 1.1 endpoint at /sparql.
    Serve(commands::serve::ServeArgs),
    /// Measure query latency: run query files repeatedly against one opened index.
    BenchQueries(commands::bench_queries::BenchQueriesArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Load(args) => commands::load::run(args),
        Command::Stats(args) => commands::stats::run(args),
        Command::Query(args) => commands::query::run(args),
        Command::Serve(args) => commands::serve::run(args),
        Command::BenchQueries(args) => commands::bench_queries::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
