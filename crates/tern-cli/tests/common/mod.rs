//! What the CLI's process tests share.

use std::path::Path;
use std::process::{Command, Output};

/// Runs `tern` with `args` in `dir` (relative paths are from there) and
/// fails the test, with its stderr, unless it succeeded.
pub fn tern_ok(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_tern"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("tern runs");
    assert!(
        out.status.success(),
        "tern {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
