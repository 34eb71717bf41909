//! Shared by the integration tests: an index built from texts written to files.

use std::path::{Path, PathBuf};
use tern_index::builder::{build, Input, LoadOptions};

/// Writes each `(file name, text)` into `dir` and builds `dir/index` from the
/// files with the default options (the format follows each name's
/// extension); returns the index's directory.
pub fn build_from_texts(dir: &Path, files: &[(&str, &str)]) -> PathBuf {
    let inputs: Vec<Input> = files
        .iter()
        .map(|(name, text)| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            Input::file(&path, None, None).unwrap()
        })
        .collect();
    let target = dir.join("index");
    build(&target, &inputs, &LoadOptions::default()).unwrap();
    target
}
