//! How fast the writers turn terms into text, without the engine: rows of
//! BSBM-like terms (two IRIs and a literal or IRI) written into a buffer
//! that is cleared every ~1 MiB, as the server does.
//!
//! cargo run --release -p tern-export --example writer_throughput [ROWS]

use oxrdf::{Literal, NamedNode, Term, Triple, Variable};
use std::time::Instant;
use tern_export::{GraphFormat, Prefixes, SolutionsFormat};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let rows: Vec<Vec<Option<Term>>> = (0..n)
        .map(|i| {
            let s = NamedNode::new_unchecked(format!(
                "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/instances/dataFromProducer{}/Product{}",
                i / 1000,
                i / 20
            ));
            let p = NamedNode::new_unchecked(format!(
                "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/productPropertyTextual{}",
                i % 6
            ));
            let o: Term = if i % 3 == 0 {
                NamedNode::new_unchecked(format!("http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/instances/ProductType{}", i % 300)).into()
            } else {
                Literal::new_simple_literal(format!("bewailed tabbies sculptor reprobates {i}")).into()
            };
            vec![Some(s.into()), Some(p.into()), Some(o)]
        })
        .collect();
    let variables = ["s", "p", "o"].map(Variable::new_unchecked);
    for format in [
        SolutionsFormat::Tsv,
        SolutionsFormat::Csv,
        SolutionsFormat::Json,
        SolutionsFormat::Xml,
    ] {
        let mut writer = format.writer();
        let mut buf = Vec::with_capacity(1 << 21);
        let mut bytes = 0;
        let started = Instant::now();
        writer.header(&mut buf, &variables);
        for row in &rows {
            writer.row(&mut buf, &tern_export::term_refs(row));
            if buf.len() >= 1 << 20 {
                bytes += buf.len();
                buf.clear();
            }
        }
        writer.footer(&mut buf);
        bytes += buf.len();
        report(format.name(), n, bytes, started);
    }
    let triples: Vec<Triple> = rows
        .iter()
        .map(|r| {
            let Some(Term::NamedNode(s)) = &r[0] else {
                unreachable!()
            };
            let Some(Term::NamedNode(p)) = &r[1] else {
                unreachable!()
            };
            Triple::new(s.clone(), p.clone(), r[2].clone().unwrap())
        })
        .collect();
    for format in [GraphFormat::Turtle, GraphFormat::NTriples] {
        let mut writer = format.writer(Prefixes::well_known());
        let mut buf = Vec::with_capacity(1 << 21);
        let mut bytes = 0;
        let started = Instant::now();
        writer.header(&mut buf);
        for t in &triples {
            writer.triple(&mut buf, t.as_ref()).unwrap();
            if buf.len() >= 1 << 20 {
                bytes += buf.len();
                buf.clear();
            }
        }
        writer.footer(&mut buf);
        bytes += buf.len();
        report(format.name(), n, bytes, started);
    }
}

fn report(name: &str, rows: usize, bytes: usize, started: Instant) {
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{name:8} {:8.0} MB/s {:6.2} M rows/s ({bytes} bytes)",
        bytes as f64 / secs / 1e6,
        rows as f64 / secs / 1e6
    );
}
