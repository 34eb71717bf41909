//! What `tern serve` serves: the index it is given, an index built at
//! start from the files it is given, or the sample data bundled with tern
//! (built on first use into a cache directory), so that `tern serve` alone
//! gives a working endpoint.

use crate::size::default_memory;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use tern_index::builder::{self, group, Input, LoadOptions};

/// The bundled sample data and its example queries.
const SAMPLE: &str = include_str!("../../../data/sample.ttl");
pub const SAMPLE_EXAMPLES: &str = include_str!("../../../data/sample-examples.rq");
/// The sample's namespace, predeclared as `ex:` when it is served.
pub const SAMPLE_NAMESPACE: &str = "http://example.org/birds/";

/// The index being served.
pub struct ServedIndex {
    pub dir: PathBuf,
    /// What it is, for the start-up line.
    pub what: String,
    /// The bundled sample is served.
    pub sample: bool,
    /// Removed when the server stops (an index built from files with no
    /// --index).
    _temporary: Option<tempfile::TempDir>,
}

/// The index for `--index` and `files`.
pub fn resolve(index: Option<&Path>, files: &[PathBuf]) -> Result<ServedIndex> {
    match (index, files.is_empty()) {
        (Some(dir), true) => Ok(ServedIndex {
            dir: dir.to_owned(),
            what: format!("index {}", dir.display()),
            sample: false,
            _temporary: None,
        }),
        (Some(dir), false) => {
            if dir.join("index.json").exists() || dir.join("store.json").exists() {
                bail!(
                    "{} holds an index already: serve it without files, or rebuild it with \
                     `tern load --index {} --force FILE...`",
                    dir.display(),
                    dir.display()
                );
            }
            build(dir, files)?;
            Ok(ServedIndex {
                dir: dir.to_owned(),
                what: format!("{} (built now into {})", names(files), dir.display()),
                sample: false,
                _temporary: None,
            })
        }
        (None, false) => {
            let temporary = tempfile::Builder::new()
                .prefix("tern-serve-")
                .tempdir()
                .context("cannot make a temporary directory for the index")?;
            let dir = temporary.path().join("index");
            build(&dir, files)?;
            Ok(ServedIndex {
                what: format!(
                    "{} (in the temporary index {}, removed at exit)",
                    names(files),
                    dir.display()
                ),
                dir,
                sample: false,
                _temporary: Some(temporary),
            })
        }
        (None, true) => sample(),
    }
}

fn names(files: &[PathBuf]) -> String {
    files
        .iter()
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn build(dir: &Path, files: &[PathBuf]) -> Result<()> {
    let inputs = files
        .iter()
        .map(|f| Input::file(f, None, None))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let options = LoadOptions {
        memory: default_memory(),
        lenient: false,
        force: false,
        progress: false,
    };
    let report = builder::build(dir, &inputs, &options)?;
    say!(
        "tern serve: loaded {} triples from {} in {:.2} s",
        group(report.meta.triples),
        names(files),
        report.meta.total_seconds
    );
    Ok(())
}

/// The sample's index in the cache directory, built if it is not there:
/// named by a hash of the sample, tern's version and the index format's
/// version, so a newer sample or index format gets a fresh one (a build
/// that changed the format without a new release version once served the
/// old sample index and failed on it).
fn sample() -> Result<ServedIndex> {
    let cache = cache_dir().context(
        "no cache directory for the sample index (set XDG_CACHE_HOME or HOME), \
         or give an index with --index",
    )?;
    let name = format!(
        "sample-{}-f{}-{:016x}",
        env!("CARGO_PKG_VERSION"),
        tern_index::FORMAT_VERSION,
        content_hash(SAMPLE)
    );
    let dir = cache.join(name);
    if !dir.join("index.json").exists() {
        std::fs::create_dir_all(&cache)
            .with_context(|| format!("cannot make {}", cache.display()))?;
        // Built beside it and renamed into place: a server stopped halfway
        // leaves no broken index behind.
        let building = tempfile::Builder::new()
            .prefix(".sample-")
            .tempdir_in(&cache)
            .with_context(|| format!("cannot write in {}", cache.display()))?;
        let ttl = building.path().join("sample.ttl");
        std::fs::write(&ttl, SAMPLE).with_context(|| format!("writing {}", ttl.display()))?;
        let index = building.path().join("index");
        build(&index, &[ttl])?;
        match std::fs::rename(&index, &dir) {
            Ok(()) => {}
            // Another server built it meanwhile.
            Err(_) if dir.join("index.json").exists() => {}
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("cannot move the index to {}", dir.display()))
            }
        }
    }
    Ok(ServedIndex {
        what: format!("the bundled sample data (index in {})", dir.display()),
        dir,
        sample: true,
        _temporary: None,
    })
}

fn cache_dir() -> Option<PathBuf> {
    let from = |var: &str| {
        std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    from("XDG_CACHE_HOME")
        .or_else(|| from("HOME").map(|home| home.join(".cache")))
        .map(|cache| cache.join("tern"))
}

/// Names the sample's content (stable for a build of tern: a rebuilt
/// tern may build the sample's index once more, which is harmless).
fn content_hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}
