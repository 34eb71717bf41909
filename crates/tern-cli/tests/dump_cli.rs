//! `tern dump` run as a separate process: what it writes parses (oxrdfio)
//! to exactly the quads that were loaded, in every format, for the whole
//! store and for one graph, across many windows of rows.

use oxrdf::{GraphName, Quad};
use oxrdfio::{RdfFormat, RdfParser};
use std::fs;
use std::io::Write;
use std::path::Path;

mod common;

/// What `tern` with `args` in `dir` writes to stdout.
fn tern(dir: &Path, args: &[&str]) -> Vec<u8> {
    common::tern_ok(dir, args).stdout
}

const GRAPHS: [&str; 2] = ["http://example.org/g1", "http://example.org/g2"];

/// 150,000 quads (several windows of rows, written on several lanes): IRIs, blank nodes,
/// literals with escapes, languages and datatypes, inline numbers, in the
/// default graph and two named graphs.
fn write_source(path: &Path) {
    let mut f = std::io::BufWriter::new(fs::File::create(path).unwrap());
    for i in 0..150_000u32 {
        let s = if i % 7 == 0 {
            format!("_:b{}", i % 1000)
        } else {
            format!("<http://example.org/s{}>", i / 3)
        };
        let o = match i % 5 {
            0 => format!("<http://example.org/o{}>", i % 997),
            1 => format!("\"text {i} with \\\"quotes\\\"\\n and \\\\ é\"@en"),
            2 => format!("\"{i}\"^^<http://www.w3.org/2001/XMLSchema#integer>"),
            3 => format!(
                "\"2020-01-{:02}\"^^<http://www.w3.org/2001/XMLSchema#date>",
                i % 28 + 1
            ),
            _ => format!("_:b{}", (i * 7) % 1000),
        };
        let g = match i % 3 {
            0 => String::new(),
            k => format!(" <{}>", GRAPHS[k as usize - 1]),
        };
        writeln!(f, "{s} <http://example.org/p{}> {o}{g} .", i % 11).unwrap();
    }
}

/// Quads as sorted lines with blank node labels masked (labels are the
/// loader's own), so that two dumps of the same data compare equal.
fn canonical(quads: impl Iterator<Item = Quad>) -> Vec<String> {
    let mut lines: Vec<String> = quads
        .map(|q| {
            q.to_string()
                .split(' ')
                .map(|w| if w.starts_with("_:") { "_:" } else { w })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    lines.sort();
    lines
}

fn parse(data: &[u8], format: RdfFormat) -> Vec<Quad> {
    RdfParser::from_format(format)
        .for_reader(data)
        .map(|q| q.expect("the dump parses"))
        .collect()
}

#[test]
fn dumps_parse_back_to_the_loaded_quads() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source.nq");
    write_source(&source);
    tern(dir.path(), &["load", "-q", "--index", "idx", "source.nq"]);
    let loaded = parse(&fs::read(&source).unwrap(), RdfFormat::NQuads);

    let all = tern(dir.path(), &["dump", "--index", "idx", "--format", "nq"]);
    let dumped = parse(&all, RdfFormat::NQuads);
    assert_eq!(dumped.len(), loaded.len());
    assert_eq!(
        canonical(dumped.into_iter()),
        canonical(loaded.iter().cloned())
    );

    for graph in [None, Some(GRAPHS[1])] {
        let name = graph.map_or(GraphName::DefaultGraph, |g| {
            oxrdf::NamedNode::new_unchecked(g).into()
        });
        let expected: Vec<Quad> = loaded
            .iter()
            .filter(|q| q.graph_name == name)
            .map(|q| {
                Quad::new(
                    q.subject.clone(),
                    q.predicate.clone(),
                    q.object.clone(),
                    GraphName::DefaultGraph,
                )
            })
            .collect();
        for (format, rdf_format) in [("nt", RdfFormat::NTriples), ("ttl", RdfFormat::Turtle)] {
            let mut args = vec!["dump", "--index", "idx", "--format", format];
            if let Some(g) = graph {
                args.extend(["--graph", g]);
            }
            let out = tern(dir.path(), &args);
            if format == "ttl" {
                // The data's one namespace gets a prefix, and every IRI in
                // it is written short.
                let text = String::from_utf8_lossy(&out);
                assert!(text.contains("@prefix ns1: <http://example.org/> ."));
                let body = text.split_once("\n\n").map_or(&*text, |(_, body)| body);
                assert!(!body.contains("<http://example.org/"), "{graph:?}");
            }
            let dumped = parse(&out, rdf_format);
            assert_eq!(dumped.len(), expected.len(), "{format} {graph:?}");
            assert_eq!(
                canonical(dumped.into_iter()),
                canonical(expected.iter().cloned()),
                "{format} {graph:?}"
            );
        }
    }

    // To a file, and a graph the store does not have is empty.
    tern(
        dir.path(),
        &[
            "dump",
            "--index",
            "idx",
            "--format",
            "nt",
            "--graph",
            "http://nothing/",
            "-o",
            "none.nt",
        ],
    );
    assert!(fs::read(dir.path().join("none.nt")).unwrap().is_empty());
}
