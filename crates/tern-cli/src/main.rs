//! The `tern` command.

/// Like `eprintln!`, but a closed or full stderr (`tern load … 2>&1 | head`,
/// a log on a full disk) loses the line instead of panicking.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod allocator;
mod cache;
mod commands;
mod duration;
mod malloc;
mod served_index;
mod settings;
mod size;
mod store;

/// Small objects in mimalloc, large buffers in the C allocator's arena
/// (see `allocator.rs`).
#[global_allocator]
static ALLOCATOR: allocator::SplitBySize = allocator::SplitBySize;

use clap::{CommandFactory, Parser, Subcommand};
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
    /// Write the whole store (or one graph) as N-Quads, N-Triples or Turtle.
    Dump(commands::dump::DumpArgs),
    /// Serve an index as a SPARQL 1.1 endpoint at /sparql.
    Serve(Box<commands::serve::ServeArgs>),
    /// Measure query latency: run query files repeatedly against one opened index.
    BenchQueries(commands::bench_queries::BenchQueriesArgs),
    /// Print a completion script for a shell (bash, zsh, fish, elvish, powershell),
    /// e.g. `tern completions bash > /etc/bash_completion.d/tern`.
    Completions { shell: clap_complete::Shell },
    /// Print tern's manual page (roff), e.g. `tern man | man -l -`.
    Man,
}

fn main() -> ExitCode {
    let command = Cli::command();
    // `tern serve`'s settings from a config file and the environment, as
    // flags below those of the command line.
    let (args, sources) =
        match settings::overlay(std::env::args_os().collect(), &command, "serve", |var| {
            std::env::var(var).ok()
        }) {
            Ok(overlaid) => overlaid,
            Err(e) => {
                say!("error: {e}");
                return ExitCode::from(2);
            }
        };
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let usage_error = e.use_stderr();
            let _ = e.print();
            if !usage_error {
                return ExitCode::SUCCESS; // --help, --version
            }
            if let Some(note) = sources.note() {
                say!("{note}");
            }
            return ExitCode::from(2);
        }
    };
    match &cli.command {
        Command::Completions { shell } => {
            clap_complete::generate(*shell, &mut Cli::command(), "tern", &mut std::io::stdout());
            return ExitCode::SUCCESS;
        }
        Command::Man => {
            return match clap_mangen::Man::new(Cli::command()).render(&mut std::io::stdout()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    say!("error: {e}");
                    ExitCode::FAILURE
                }
            };
        }
        _ => {}
    }
    // Before any thread exists: the rayon pool and the main thread below
    // are threads too. A load with one arena per sorting thread peaked
    // anywhere from 68 to 96 MiB under a 48 MiB budget (each arena keeps
    // what its thread freed); the server writes exports on every core, one
    // arena each (see `malloc.rs`).
    match cli.command {
        Command::Load(_) => malloc::limit_arenas(1),
        Command::Serve(_) => malloc::limit_arenas(
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
        ),
        _ => {}
    }
    // Parsing, planning and running a query recurse on its structure; the
    // engine bounds the depth, and these threads have the stack for it.
    tern_engine::init_thread_pool();
    let worker = std::thread::Builder::new()
        .name("tern-main".into())
        .stack_size(tern_engine::QUERY_STACK_BYTES)
        .spawn(move || run(cli.command));
    let result = match worker.map(|w| w.join()) {
        Ok(Ok(result)) => result,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(e) => Err(anyhow::anyhow!("cannot start the main thread: {e}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            say!("error: {}", message(&e));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes, each cause once: typed errors often show
/// their source in their own message already.
fn message(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let cause = cause.to_string();
        if text.contains(&cause) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause);
    }
    text
}

fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Load(args) => commands::load::run(args),
        Command::Stats(args) => commands::stats::run(args),
        Command::Query(args) => commands::query::run(args),
        Command::Dump(args) => commands::dump::run(args),
        Command::Serve(args) => commands::serve::run(*args),
        Command::BenchQueries(args) => commands::bench_queries::run(args),
        Command::Completions { .. } | Command::Man => Ok(()), // answered in main
    }
}
