//! The engine's folders depend on each other one way (see `src/lib.rs`): a
//! folder may use only the folders below it in [`LAYERS`]. This test reads
//! the sources and fails on any `crate::` path that goes up or sideways, so
//! the shape cannot drift back into cycles unnoticed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// From the bottom up: each stage may use the ones before it.
const LAYERS: &[&str] = &[
    "error", "suspend", "context", "expr", "exec", "plan", "infer", "run", "update",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The first segment of every `crate::` path in `source`, comments left out;
/// for `crate::{a::b, c}`, `a` and `c`.
fn crate_paths(source: &str) -> Vec<String> {
    let code: String = source
        .lines()
        .map(|line| match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let (mut depth, mut start) = (0, 0);
            for (k, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        out.push(ident(&group[start..k]));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.push(ident(&group[start..k]));
                        start = k + 1;
                    }
                    _ => {}
                }
            }
        } else {
            out.push(ident(rest));
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// Names `lib.rs` re-exports, by the folder they come from.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in lib.lines() {
        let Some(path) = line.trim().strip_prefix("pub use ") else {
            continue;
        };
        let path = path.split(';').next().unwrap();
        let mut parts = path.split("::");
        let folder = parts.next().unwrap().to_owned();
        if let Some(name) = parts.last() {
            out.insert(name.to_owned(), folder);
        }
    }
    out
}

#[test]
fn folders_use_only_the_stages_below_them() {
    let src = manifest_dir().join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let exported = reexports(&lib);
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut faults = Vec::new();
    let mut seen_folders = 0;
    for file in files {
        let relative = file.strip_prefix(&src).unwrap();
        let own = relative
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_owned();
        if own == "lib" {
            continue;
        }
        let Some(own_layer) = LAYERS.iter().position(|l| *l == own) else {
            faults.push(format!("{}: not in a known stage", relative.display()));
            continue;
        };
        seen_folders += 1;
        let source = std::fs::read_to_string(&file).unwrap();
        for first in crate_paths(&source) {
            let target = exported.get(&first).cloned().unwrap_or(first.clone());
            match LAYERS.iter().position(|l| *l == target) {
                Some(layer) if layer <= own_layer => {}
                Some(_) => faults.push(format!(
                    "{}: uses crate::{first} ({target} is above {own})",
                    relative.display()
                )),
                None => faults.push(format!(
                    "{}: uses crate::{first}, which is no stage",
                    relative.display()
                )),
            }
        }
    }
    assert!(seen_folders > 50, "read only {seen_folders} files");
    assert!(faults.is_empty(), "layering faults:\n{}", faults.join("\n"));
}

#[test]
fn the_path_reader_sees_grouped_and_plain_paths() {
    let found = crate_paths(
        "use crate::plan::Planner;\nuse crate::{expr, EngineError};\n// crate::run\nlet x = crate::exec::BATCH_ROWS;",
    );
    assert_eq!(found, ["plan", "expr", "EngineError", "exec"]);
}

/// The package's folder: where `cargo test` runs this binary from, not where
/// it was compiled (a build cache shared by clones of the repository may
/// hold a binary compiled in another clone, since deleted).
fn manifest_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into())
}
