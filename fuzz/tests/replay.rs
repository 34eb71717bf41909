//! Runs every target over its corpus (`corpus/TARGET/`) and over the inputs
//! that once crashed it (`regressions/TARGET/`), without libFuzzer: the fuzz
//! findings stay fixed in every `cargo test` run.

fn replay(target: &str, run: fn(&[u8])) {
    let root = manifest_dir();
    let mut count = 0;
    for dir in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            run(&std::fs::read(&path).unwrap());
            count += 1;
        }
    }
    assert!(count > 0, "no inputs for {target}");
}

#[test]
fn ntriples() {
    replay("ntriples", tern_fuzz::ntriples);
}

#[test]
fn turtle() {
    replay("turtle", tern_fuzz::turtle);
}

#[test]
fn query() {
    replay("query", tern_fuzz::query);
}

#[test]
fn token() {
    replay("token", tern_fuzz::token);
}

#[test]
fn request() {
    replay("request", tern_fuzz::request);
}

/// The package's folder: where `cargo test` runs this binary from, not where
/// it was compiled (a build cache shared by clones of the repository may
/// hold a binary compiled in another clone, since deleted).
fn manifest_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into())
}
