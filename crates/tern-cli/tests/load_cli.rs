//! End-to-end tests of `tern load` and `tern stats` run as a separate process.

use serde_json::Value;
use std::fs::{self, File};
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn tern() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tern"))
}

/// Runs `tern` with `args` in `dir` (so error messages name files relative to it).
fn run(dir: &Path, args: &[&str]) -> Output {
    tern()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("tern runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts a successful run and returns its stderr.
fn ok(out: Output) -> String {
    let err = stderr(&out);
    assert!(out.status.success(), "tern failed ({}):\n{err}", out.status);
    err
}

/// Asserts a failed run and returns its stderr.
fn fails(out: Output) -> String {
    let err = stderr(&out);
    assert!(
        !out.status.success(),
        "tern should have failed, but exited 0:\n{err}"
    );
    assert!(err.contains("error: "), "no error line in:\n{err}");
    err
}

fn load(dir: &Path, args: &[&str]) -> String {
    let mut all = vec!["load", "-q"];
    all.extend_from_slice(args);
    ok(run(dir, &all))
}

fn load_fails(dir: &Path, args: &[&str]) -> String {
    let mut all = vec!["load", "-q"];
    all.extend_from_slice(args);
    fails(run(dir, &all))
}

fn stats(dir: &Path, index: &str) -> Value {
    let out = run(dir, &["stats", "--index", index, "--json"]);
    ok(out.clone());
    serde_json::from_slice(&out.stdout).expect("stats prints JSON")
}

fn num(stats: &Value, key: &str) -> u64 {
    stats[key]
        .as_u64()
        .unwrap_or_else(|| panic!("stats has no number {key:?}: {stats:#}"))
}

fn index_id(stats: &Value) -> String {
    stats["index_id"]
        .as_str()
        .expect("index_id is a string")
        .to_owned()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    path
}

/// Names in `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Hidden build or replaced-index directories left in `dir`.
fn leftovers(dir: &Path) -> Vec<String> {
    entries(dir)
        .into_iter()
        .filter(|n| n.starts_with('.') && (n.contains(".building-") || n.contains(".replaced-")))
        .collect()
}

/// `n` distinct triples, one a line, mixing IRIs, literals and numbers.
fn triples(n: usize) -> String {
    (0..n)
        .map(|i| match i % 3 {
            0 => format!("<http://ex/s{i}> <http://ex/p{}> <http://ex/o{}> .\n", i % 4, i * 7),
            1 => format!("<http://ex/s{i}> <http://ex/name> \"name {i}\"@en .\n"),
            _ => format!("<http://ex/s{i}> <http://ex/n> \"{i}\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n"),
        })
        .collect()
}

// 1. A strict load stops at the first bad statement and says exactly where it is.

#[test]
fn strict_load_reports_file_line_and_column_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // Line 3: `<http://a b>` starts at character 23 (10 + 1 + 10 + 1 + 1).
    write(
        dir,
        "bad.nt",
        "<http://s> <http://p> <http://o> .\n<http://s> <http://p> \"x\" .\n<http://s> <http://p> <http://a b> .\n<http://s> <http://p> <http://o4> .\n",
    );
    let err = load_fails(dir, &["--index", "idx", "bad.nt"]);
    assert!(
        err.contains("error: bad.nt:3:23: "),
        "wrong position in:\n{err}"
    );
    assert!(err.contains("Invalid IRI"), "no reason in:\n{err}");
    assert_eq!(
        entries(dir),
        ["bad.nt"],
        "a failed load must create neither the index nor a build dir"
    );
}

#[test]
fn columns_count_characters_not_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // `<http://é/s>` is 12 characters but 13 bytes: `<http://a b>` starts at character 25.
    write(
        dir,
        "bad.nt",
        "<http://s> <http://p> <http://o> .\n<http://s> <http://p> \"x\" .\n<http://é/s> <http://p> <http://a b> .\n",
    );
    let err = load_fails(dir, &["--index", "idx", "bad.nt"]);
    assert!(
        err.contains("error: bad.nt:3:25: "),
        "wrong position in:\n{err}"
    );
    // An extra term after an object (`"é€"` is 4 characters, 8 bytes) at character 28.
    write(
        dir,
        "extra.nt",
        "<http://s> <http://p> <http://o> .\n\n<http://s> <http://p> \"é€\" <http://o> .\n",
    );
    let err = load_fails(dir, &["--index", "idx", "extra.nt"]);
    assert!(
        err.contains("error: extra.nt:3:28: "),
        "wrong position in:\n{err}"
    );
    assert_eq!(entries(dir), ["bad.nt", "extra.nt"]);
}

#[test]
fn positions_are_absolute_across_chunks_and_compression() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // About 4 MB: with --memory 16M the reader cuts it into several chunks.
    let mut text = String::new();
    for i in 1..=100_000 {
        if i == 70_000 {
            text.push_str(&format!(
                "<http://ex/s{i}> <http://ex/p> <http://ex/a b{i}> .\n"
            ));
        } else {
            text.push_str(&format!("<http://ex/s{i}> <http://ex/p> \"v{i}\" .\n"));
        }
    }
    write(dir, "far.nt", &text);
    write_gzip(&dir.join("far.nt.gz"), text.as_bytes());
    write_zstd_long(&dir.join("far.nt.zst"), text.as_bytes());
    // `<http://ex/s70000>` is 18 characters, `<http://ex/p>` 13: the bad IRI starts at 34.
    for file in ["far.nt", "far.nt.gz", "far.nt.zst"] {
        let err = load_fails(dir, &["--index", "idx", "--memory", "16M", file]);
        assert!(
            err.contains(&format!("error: {file}:70000:34: ")),
            "wrong position in:\n{err}"
        );
    }
    assert!(!dir.join("idx").exists());
    assert_eq!(leftovers(dir), Vec::<String>::new());
}

// 2. A lenient load skips bad statements, counts them and lists where they are.

#[test]
fn lenient_load_skips_and_lists_bad_statements() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut text = String::new();
    for i in 1..=10 {
        if i == 4 {
            // Line 4; `<http://ex/s4>` is 14 characters, so the bad IRI starts at 30.
            text.push_str("<http://ex/s4> <http://ex/p> <http://ex/a b> .\n");
        }
        if i == 8 {
            // Line 9; a bad escape: the literal starts at 30, its backslash is at 32.
            text.push_str("<http://ex/s9> <http://ex/p> \"v\\q\" .\n");
        }
        text.push_str(&format!("<http://ex/s{i}> <http://ex/p> \"v{i}\" .\n"));
    }
    write(dir, "mixed.nt", &text);
    let err = load(dir, &["--index", "idx", "--lenient", "mixed.nt"]);
    assert!(
        err.contains("Skipped 2 bad statements; the first ones:"),
        "{err}"
    );
    assert!(
        err.contains("mixed.nt:4:30: "),
        "first position missing in:\n{err}"
    );
    assert!(
        err.contains("mixed.nt:9:32: "),
        "second position missing in:\n{err}"
    );
    assert_eq!(
        err.matches("mixed.nt:").count(),
        2,
        "only the two bad lines are listed:\n{err}"
    );
    let s = stats(dir, "idx");
    assert_eq!(num(&s, "triples"), 10, "{s:#}");
    assert_eq!(num(&s, "statements_read"), 10, "{s:#}");
    assert_eq!(num(&s, "statements_skipped"), 2, "{s:#}");
}

#[test]
fn lenient_load_lists_only_the_first_ten() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut text = String::new();
    for i in 1..=30 {
        if i % 2 == 0 {
            text.push_str(&format!(
                "<http://ex/s{i}> <http://ex/p> <http://ex/a b> .\n"
            ));
        } else {
            text.push_str(&format!("<http://ex/s{i}> <http://ex/p> <http://ex/o> .\n"));
        }
    }
    write(dir, "many.nt", &text);
    let err = load(dir, &["--index", "idx", "--lenient", "many.nt"]);
    assert!(
        err.contains("Skipped 15 bad statements; the first ones:"),
        "{err}"
    );
    let listed: Vec<&str> = err
        .lines()
        .filter(|l| l.trim_start().starts_with("many.nt:"))
        .collect();
    let expected: Vec<String> = (1..=10).map(|k| format!("many.nt:{}:", 2 * k)).collect();
    assert_eq!(listed.len(), 10, "{err}");
    for (line, want) in listed.iter().zip(&expected) {
        assert!(
            line.trim_start().starts_with(want.as_str()),
            "{line:?} should start with {want:?}"
        );
    }
    let s = stats(dir, "idx");
    assert_eq!(num(&s, "triples"), 15);
    assert_eq!(num(&s, "statements_skipped"), 15);
}

/// N-Triples is line based: a bad line is one bad statement. A lenient load must
/// skip all of it (load nothing from it), count it once, and keep every good line
/// around it, whatever the error.
#[test]
fn lenient_skips_exactly_the_bad_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let cases = [
        (
            "unterminated string",
            "<http://ex/bad> <http://ex/p> \"unterminated .",
        ),
        (
            "unclosed IRI",
            "<http://ex/bad> <http://ex/p> <http://ex/unclosed .",
        ),
        ("missing dot", "<http://ex/bad> <http://ex/p> \"x\""),
        (
            "extra term",
            "<http://ex/bad> <http://ex/p> \"x\" <http://ex/extra> .",
        ),
        // Controls that work.
        (
            "IRI with a space",
            "<http://ex/bad> <http://ex/p> <http://ex/a b> .",
        ),
        (
            "bad language tag",
            "<http://ex/bad> <http://ex/p> \"x\"@@en .",
        ),
    ];
    let mut problems = Vec::new();
    for (i, (what, bad)) in cases.iter().enumerate() {
        let name = format!("case{i}.nt");
        // The good lines have literals and IRIs after the bad one (line 2).
        let text = format!(
            "<http://ex/g1> <http://ex/p> \"a\" .\n{bad}\n<http://ex/g3> <http://ex/p> \"b\" .\n<http://ex/g4> <http://ex/p> <http://ex/o> .\n<http://ex/g5> <http://ex/p> \"c\" .\n"
        );
        write(dir, &name, &text);
        let index = format!("idx{i}");
        let err = load(dir, &["--index", &index, "--lenient", &name]);
        let s = stats(dir, &index);
        let positions: Vec<&str> = err
            .lines()
            .map(str::trim_start)
            .filter(|l| l.starts_with(&format!("{name}:")))
            .collect();
        let got = (
            num(&s, "triples"),
            num(&s, "statements_read"),
            num(&s, "statements_skipped"),
        );
        let right_line = positions.len() == 1 && positions[0].starts_with(&format!("{name}:2:"));
        if got != (4, 4, 1) || !right_line {
            problems.push(format!(
                "{what}: {bad:?} -> (triples, statements_read, statements_skipped) = {got:?}, want (4, 4, 1); \
                 reported {positions:?}, want one at line 2"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "lenient recovery is not line based:\n{}",
        problems.join("\n")
    );
}

/// A statement without its final dot is reported on its own line, not the next.
#[test]
fn strict_missing_dot_is_reported_on_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(
        dir,
        "nodot.nt",
        "<http://s> <http://p> <http://o> .\n<http://s> <http://p> \"x\"\n<http://s> <http://p> <http://o3> .\n",
    );
    let err = load_fails(dir, &["--index", "idx", "nodot.nt"]);
    assert!(err.contains("error: nodot.nt:2:"), "wrong line in:\n{err}");
    assert!(!dir.join("idx").exists());
}

// 3. A failed load leaves the previous index as it was.

#[test]
fn failed_force_load_leaves_the_old_index_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(dir, "good.nt", &triples(50));
    load(dir, &["--index", "idx", "good.nt"]);
    let before = stats(dir, "idx");
    assert_eq!(num(&before, "triples"), 50);
    let files_before = entries(&dir.join("idx"));

    // A bad statement early, then late in a file big enough to span chunks.
    write(dir, "bad.nt", "<http://s> <http://p> <http://o> .\n<http://s> <http://p> \"x\" .\n<http://a b> <http://p> <http://o> .\n");
    let mut late = triples(60_000);
    late.push_str("<http://s> <http://p> \"never closed .\n");
    write(dir, "late.nt", &late);
    let err = load_fails(dir, &["--index", "idx", "--force", "bad.nt"]);
    assert!(err.contains("bad.nt:3:1: "), "{err}");
    let err = load_fails(
        dir,
        &["--index", "idx", "--force", "--memory", "16M", "late.nt"],
    );
    assert!(err.contains("late.nt:60001:"), "{err}");
    // An input that cannot be read.
    let err = load_fails(dir, &["--index", "idx", "--force", "good.nt", "missing.nt"]);
    assert!(err.contains("missing.nt"), "{err}");

    let after = stats(dir, "idx");
    assert_eq!(index_id(&after), index_id(&before));
    assert_eq!(num(&after, "triples"), 50);
    assert_eq!(after, before, "stats changed after failed loads");
    assert_eq!(entries(&dir.join("idx")), files_before);
    assert_eq!(
        leftovers(dir),
        Vec::<String>::new(),
        "in {:?}",
        entries(dir)
    );
}

// 4. Existing indexes need --force; other directories are never replaced.

#[test]
fn existing_index_needs_force_and_force_replaces_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(dir, "a.nt", &triples(20));
    write(dir, "b.nt", &triples(30));
    load(dir, &["--index", "idx", "a.nt"]);
    let first = stats(dir, "idx");
    assert_eq!(num(&first, "triples"), 20);

    let err = load_fails(dir, &["--index", "idx", "b.nt"]);
    assert!(
        err.contains("already exists") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(stats(dir, "idx"), first, "a refused load changed the index");

    load(dir, &["--index", "idx", "--force", "b.nt"]);
    let second = stats(dir, "idx");
    assert_eq!(num(&second, "triples"), 30);
    assert_ne!(
        index_id(&second),
        index_id(&first),
        "a new build gets a new index_id"
    );
    assert_eq!(second["inputs"], serde_json::json!(["b.nt"]));
    assert_eq!(
        leftovers(dir),
        Vec::<String>::new(),
        "in {:?}",
        entries(dir)
    );
}

#[test]
fn non_index_directory_is_never_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(dir, "a.nt", &triples(20));
    fs::create_dir(dir.join("docs")).unwrap();
    write(&dir.join("docs"), "notes.txt", "precious");
    fs::write(dir.join("plain-file"), "also precious").unwrap();
    for force in [false, true] {
        for target in ["docs", "plain-file"] {
            let mut args = vec!["--index", target, "a.nt"];
            if force {
                args.push("--force");
            }
            let err = load_fails(dir, &args);
            assert!(err.contains("not a Tern index"), "{err}");
        }
    }
    assert_eq!(entries(&dir.join("docs")), ["notes.txt"]);
    assert_eq!(
        fs::read_to_string(dir.join("docs/notes.txt")).unwrap(),
        "precious"
    );
    assert_eq!(
        fs::read_to_string(dir.join("plain-file")).unwrap(),
        "also precious"
    );
    assert_eq!(
        leftovers(dir),
        Vec::<String>::new(),
        "in {:?}",
        entries(dir)
    );

    // An empty directory is fine.
    fs::create_dir(dir.join("empty")).unwrap();
    load(dir, &["--index", "empty", "a.nt"]);
    assert_eq!(num(&stats(dir, "empty"), "triples"), 20);
}

// 5. Compressed inputs, stdin, graphs and blank nodes.

fn write_gzip(path: &Path, data: &[u8]) {
    let mut encoder =
        flate2::write::GzEncoder::new(File::create(path).unwrap(), flate2::Compression::default());
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap();
}

/// A zstd frame with a 256 MiB window (as `zstd --long=28` writes for a stream),
/// more than decoders accept by default.
fn write_zstd_long(path: &Path, data: &[u8]) {
    let mut encoder = zstd::stream::Encoder::new(File::create(path).unwrap(), 3).unwrap();
    encoder.long_distance_matching(true).unwrap();
    encoder.window_log(28).unwrap();
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap();
}

#[test]
fn compressed_files_and_stdin_give_the_same_index() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut text = triples(3000);
    text.push_str("_:b1 <http://ex/p> \"blank\" .\n_:b2 <http://ex/p> _:b1 .\n");
    write(dir, "data.nt", &text);
    write_gzip(&dir.join("data.nt.gz"), text.as_bytes());
    write_zstd_long(&dir.join("data.nt.zst"), text.as_bytes());
    // The frame really needs a long window: a default decoder refuses it.
    let zst = fs::read(dir.join("data.nt.zst")).unwrap();
    assert!(
        zstd::stream::decode_all(&zst[..]).is_err(),
        "the test frame should need a long window"
    );

    load(dir, &["--index", "nt", "data.nt"]);
    load(dir, &["--index", "gz", "data.nt.gz"]);
    load(dir, &["--index", "zst", "data.nt.zst"]);
    let mut child = tern()
        .current_dir(dir)
        .args(["load", "-q", "--index", "stdin", "--format", "nt", "-"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    ok(child.wait_with_output().unwrap());

    let reference = stats(dir, "nt");
    assert_eq!(num(&reference, "triples"), 3002);
    assert_eq!(num(&reference, "blank_nodes"), 2);
    for index in ["gz", "zst", "stdin"] {
        let s = stats(dir, index);
        for key in [
            "triples",
            "statements_read",
            "vocabulary_terms",
            "blank_nodes",
            "distinct_terms",
        ] {
            assert_eq!(s[key], reference[key], "{key} differs for {index}");
        }
        assert_eq!(
            s["predicates"], reference["predicates"],
            "predicates differ for {index}"
        );
    }
    assert_eq!(
        stats(dir, "stdin")["inputs"],
        serde_json::json!(["<stdin>"])
    );
}

#[test]
fn stdin_needs_a_format() {
    let tmp = tempfile::tempdir().unwrap();
    let err = fails(
        tern()
            .current_dir(tmp.path())
            .args(["load", "-q", "--index", "idx", "-"])
            .stdin(Stdio::null())
            .output()
            .unwrap(),
    );
    assert!(err.contains("--format"), "{err}");
    assert!(!tmp.path().join("idx").exists());
}

#[test]
fn quads_and_graph_options_fill_named_graphs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(
        dir,
        "q.nq",
        concat!(
            "<http://s> <http://p> <http://o> <http://g1> .\n",
            "<http://s> <http://p> <http://o> <http://g2> .\n",
            "<http://s> <http://p> <http://o2> <http://g2> .\n",
            "<http://s> <http://p> <http://o> .\n",
        ),
    );
    load(dir, &["--index", "nq", "q.nq"]);
    let s = stats(dir, "nq");
    assert_eq!(num(&s, "named_graphs"), 2, "{s:#}");
    assert_eq!(num(&s, "triples"), 4, "{s:#}");

    let same = "<http://s> <http://p> <http://o> .\n";
    write(dir, "a.nt", same);
    write(dir, "b.nt", same);
    write(dir, "c.nt", same);

    // Without graph options, the same triple from three files is one triple.
    load(dir, &["--index", "plain", "a.nt", "b.nt"]);
    let s = stats(dir, "plain");
    assert_eq!(
        (num(&s, "triples"), num(&s, "named_graphs")),
        (1, 0),
        "{s:#}"
    );

    // --graph puts the positional files into one named graph.
    load(
        dir,
        &["--index", "one", "--graph", "http://ex/g1", "a.nt", "b.nt"],
    );
    let s = stats(dir, "one");
    assert_eq!(
        (num(&s, "triples"), num(&s, "named_graphs")),
        (1, 1),
        "{s:#}"
    );

    // --named adds a file in its own graph next to the default graph.
    load(
        dir,
        &["--index", "two", "c.nt", "--named", "http://ex/g2=b.nt"],
    );
    let s = stats(dir, "two");
    assert_eq!(
        (num(&s, "triples"), num(&s, "named_graphs")),
        (2, 1),
        "{s:#}"
    );

    // Both: two named graphs, the same triple in each.
    load(
        dir,
        &[
            "--index",
            "three",
            "--graph",
            "http://ex/g1",
            "a.nt",
            "--named",
            "http://ex/g2=b.nt",
            "--named",
            "http://ex/g3=c.nt",
        ],
    );
    let s = stats(dir, "three");
    assert_eq!(
        (num(&s, "triples"), num(&s, "named_graphs")),
        (3, 3),
        "{s:#}"
    );

    let err = load_fails(dir, &["--index", "bad", "--graph", "not an iri", "a.nt"]);
    assert!(err.contains("not an iri"), "{err}");
    assert_eq!(
        leftovers(dir),
        Vec::<String>::new(),
        "in {:?}",
        entries(dir)
    );
}

#[test]
fn blank_node_labels_are_scoped_to_their_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(dir, "a.nt", "_:x <http://ex/p> <http://ex/o> .\n");
    write(dir, "b.nt", "_:x <http://ex/p> <http://ex/o> .\n");
    load(dir, &["--index", "two", "a.nt", "b.nt"]);
    let s = stats(dir, "two");
    assert_eq!(num(&s, "blank_nodes"), 2, "{s:#}");
    assert_eq!(num(&s, "triples"), 2, "{s:#}");

    // Within one file, one label is one node.
    write(
        dir,
        "c.nt",
        "_:x <http://ex/p> <http://ex/o1> .\n_:x <http://ex/p> <http://ex/o2> .\n",
    );
    load(dir, &["--index", "one", "c.nt"]);
    let s = stats(dir, "one");
    assert_eq!(num(&s, "blank_nodes"), 1, "{s:#}");
    assert_eq!(num(&s, "triples"), 2, "{s:#}");
    assert_eq!(s["predicates"][0]["distinct_subjects"], 1, "{s:#}");
}

// 6. Duplicate statements are stored once.

#[test]
fn duplicates_are_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let line = "<http://ex/s> <http://ex/p> \"same\" .\n";
    write(dir, "dup.nt", &line.repeat(3));
    load(dir, &["--index", "idx", "dup.nt"]);
    let s = stats(dir, "idx");
    assert_eq!(num(&s, "triples"), 1, "{s:#}");
    assert_eq!(num(&s, "statements_read"), 3, "{s:#}");
    assert_eq!(num(&s, "statements_skipped"), 0, "{s:#}");
    assert_eq!(
        s["predicates"],
        serde_json::json!([{"predicate": "<http://ex/p>", "triples": 1, "distinct_subjects": 1, "distinct_objects": 1}])
    );

    // Across files too.
    write(dir, "again.nt", line);
    load(dir, &["--index", "idx2", "dup.nt", "again.nt"]);
    let s = stats(dir, "idx2");
    assert_eq!(
        (num(&s, "triples"), num(&s, "statements_read")),
        (1, 4),
        "{s:#}"
    );
}

// 7. The builder stays within its memory budget on input several times larger.

const BUDGET_MIB: u64 = 48;
const SLACK_MIB: u64 = 48;
const BIG_TRIPLES: u64 = 1_500_000;

/// Writes `n` triples with many distinct IRIs and literals; returns the file size.
fn write_big(path: &Path, n: u64) -> u64 {
    let mut w = BufWriter::with_capacity(1 << 20, File::create(path).unwrap());
    for i in 0..n {
        write!(
            w,
            "<http://example.org/resource/{i}> <http://example.org/vocab/p{}> ",
            i % 20
        )
        .unwrap();
        match i % 3 {
            0 => writeln!(
                w,
                "\"Literal text for item {i} with some padding {:08x}\"@en .",
                i.wrapping_mul(2_654_435_761) % (1 << 32)
            ),
            1 => writeln!(w, "<http://example.org/resource/{}> .", (i * 7919) % n),
            _ => writeln!(w, "\"{i}\"^^<http://www.w3.org/2001/XMLSchema#integer> ."),
        }
        .unwrap();
    }
    w.into_inner().unwrap().sync_all().unwrap();
    fs::metadata(path).unwrap().len()
}

/// VmHWM of a running process in KiB, if it is still there.
fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn load_stays_within_its_memory_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let input = dir.join("big.nt");
    let bytes = write_big(&input, BIG_TRIPLES);
    assert!(
        bytes >= 3 * (BUDGET_MIB << 20),
        "input of {bytes} bytes is too small for the test"
    );

    let budget = format!("{BUDGET_MIB}M");
    // Reaped by wait4 below, which also gives its resource usage.
    #[allow(clippy::zombie_processes)]
    let mut child = tern()
        .current_dir(dir)
        .args([
            "load", "-q", "--memory", &budget, "--index", "idx", "big.nt",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stderr_pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        stderr_pipe.read_to_string(&mut text).unwrap();
        text
    });
    let poller = std::thread::spawn(move || {
        let mut seen = 0;
        while let Some(hwm) = vm_hwm_kib(pid) {
            seen = seen.max(hwm);
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        seen
    });
    let mut status = 0;
    // SAFETY: waits for our own child and fills a zeroed rusage.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid as i32, &mut status, 0, &mut usage) };
    assert_eq!(
        waited,
        pid as i32,
        "wait4 failed: {}",
        std::io::Error::last_os_error()
    );
    // The ru_maxrss of a child started with vfork/posix_spawn also covers this
    // test process's peak (the memory it had at the child's exec), so it is exact
    // only when it exceeds that peak; the child's own VmHWM, polled while it runs,
    // is the fallback.
    let own_peak = vm_hwm_kib(std::process::id()).expect("own VmHWM");
    let err = reader.join().unwrap();
    let polled = poller.join().unwrap();
    let child_max = usage.ru_maxrss as u64;
    let peak = if child_max > own_peak {
        child_max
    } else {
        polled
    };
    eprintln!(
        "load of {bytes} bytes ({BIG_TRIPLES} triples) with --memory {budget}: peak RSS {peak} KiB ({:.1} MiB); \
         wait4 ru_maxrss {child_max} KiB, polled VmHWM {polled} KiB, test process peak {own_peak} KiB",
        peak as f64 / 1024.0
    );
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "load failed (status {status}):\n{err}"
    );
    let s = stats(dir, "idx");
    assert_eq!(num(&s, "triples"), BIG_TRIPLES, "{s:#}");
    assert_eq!(num(&s, "statements_read"), BIG_TRIPLES, "{s:#}");
    let limit = (BUDGET_MIB + SLACK_MIB) << 10;
    assert!(
        peak <= limit,
        "peak RSS {peak} KiB ({:.1} MiB) is over the budget of {BUDGET_MIB} MiB + {SLACK_MIB} MiB slack",
        peak as f64 / 1024.0
    );
}

#[test]
fn a_line_longer_than_a_read_chunk_loads_and_one_past_the_budget_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // 33 MiB: longer than the loader's largest read chunk (32 MiB); it used
    // to be carried over forever.
    let long = "a".repeat(33 << 20);
    let text = format!(
        "<http://e/s> <http://e/p> \"short\" .\n<http://e/s> <http://e/q> \"1\" .\n<http://e/s> <http://e/p> \"{long}\" .\n<http://e/t> <http://e/p> \"after\" .\n"
    );
    fs::write(dir.join("long.nt"), &text).unwrap();
    load(dir, &["--index", "idx", "long.nt"]);
    assert_eq!(stats(dir, "idx")["triples"], 4);
    let out = run(
        dir,
        &[
            "query",
            "--index",
            "idx",
            "--format",
            "csv",
            "SELECT (MAX(STRLEN(?o)) AS ?n) WHERE { ?s ?p ?o }",
        ],
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(&(33u64 << 20).to_string()));
    // With 16 MiB of memory a line may have 4 MiB: the error says where.
    let err = load_fails(dir, &["--index", "small", "--memory", "16M", "long.nt"]);
    assert!(
        err.contains("long.nt:3:1: this line is longer than"),
        "{err}"
    );
    assert!(err.contains("--memory"), "{err}");
}

#[test]
fn a_turtle_term_past_the_parser_buffer_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let long = "a".repeat(17 << 20);
    fs::write(
        dir.join("long.ttl"),
        format!("<http://e/s> <http://e/p> \"{long}\" .\n"),
    )
    .unwrap();
    let err = load_fails(dir, &["--index", "idx", "long.ttl"]);
    assert!(
        err.contains("long.ttl: after statement 0, a term longer than"),
        "{err}"
    );
}

#[test]
fn a_byte_order_mark_is_skipped_in_every_format() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let bom = "\u{feff}";
    let files = [
        ("bom.nt", "<http://e/s> <http://e/p> \"x\" .\n"),
        ("bom.nq", "<http://e/s> <http://e/p> \"x\" <http://e/g> .\n"),
        ("bom.ttl", "@prefix e: <http://e/> .\ne:s e:p \"x\" .\n"),
        (
            "bom.trig",
            "@prefix e: <http://e/> .\ne:g { e:s e:p \"x\" }\n",
        ),
    ];
    for (name, text) in files {
        fs::write(dir.join(name), format!("{bom}{text}")).unwrap();
        let index = format!("idx-{name}");
        load(dir, &["--index", &index, name]);
        assert_eq!(stats(dir, &index)["triples"], 1, "{name}");
    }
    // A mark anywhere else is a character like any other, and an error.
    fs::write(
        dir.join("late.nt"),
        format!("<http://e/s> <http://e/p> \"x\" .\n{bom}<http://e/s> <http://e/p> \"y\" .\n"),
    )
    .unwrap();
    let err = load_fails(dir, &["--index", "late", "late.nt"]);
    assert!(err.contains("late.nt:2:1"), "{err}");
}

/// Without a terminal (a log file, a service manager), each progress line
/// starts with the UTC time, so a log says when each phase began.
#[test]
fn plain_progress_lines_carry_a_timestamp() {
    let dir = tempfile::tempdir().unwrap();
    let data = write(dir.path(), "data.nt", &triples(10));
    let out = ok(run(
        dir.path(),
        &["load", "--index", "idx", data.to_str().unwrap()],
    ));
    let phases: Vec<&str> = out.lines().filter(|l| l.contains("[tern load]")).collect();
    assert!(phases.len() >= 2, "no phase lines in:\n{out}");
    for line in phases {
        let (stamp, rest) = line.split_once(' ').unwrap();
        let shape = stamp.len() == 20
            && stamp.ends_with('Z')
            && stamp.as_bytes()[10] == b'T'
            && stamp[..4].parse::<u32>().is_ok_and(|y| y >= 2024);
        assert!(shape && rest.starts_with("[tern load] "), "{line:?}");
    }
}
