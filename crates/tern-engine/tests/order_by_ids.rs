//! ORDER BY on a column of vocabulary literals sorts by ID where the
//! literals are all of one kind that compares by lexical form (simple
//! strings, language strings, one non-XML-Schema datatype), without
//! decoding them; everywhere else by their terms. The order must be
//! SPARQL's in both cases, so each query is checked against the order the
//! same values get when the sort cannot use IDs (a computed key, `STR`
//! applied through `IF`, which makes the engine decode).

use tern_engine::{EngineOptions, QueryOutcome};

mod common;

const DATA: &str = r#"
@prefix ex: <http://example.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:s1 ex:name "delta" . ex:s2 ex:name "Alpha" . ex:s3 ex:name "alpha" .
ex:s4 ex:name "b\u00e9ta" . ex:s5 ex:name "beta" . ex:s6 ex:name "" .
ex:s7 ex:name "zeta" . ex:s8 ex:name ex:anIri . ex:s9 ex:name _:blank .
ex:l1 ex:label "chat"@fr . ex:l2 ex:label "cat"@en . ex:l3 ex:label "cat"@de .
ex:l4 ex:label "Cat"@en .
ex:p1 ex:price "10.5"^^ex:USD . ex:p2 ex:price "9.99"^^ex:USD . ex:p3 ex:price "100"^^ex:USD .
ex:m1 ex:mixed "10" . ex:m2 ex:mixed "9"^^xsd:float . ex:m3 ex:mixed "010"^^xsd:integer .
ex:m4 ex:mixed "8"@en . ex:m5 ex:mixed 7 .
"#;

const PREFIX: &str = "PREFIX ex: <http://example.org/>\n";

/// The subjects in the order the query gives them.
fn subjects(engine: &tern_engine::Engine, query: &str) -> Vec<String> {
    let QueryOutcome::Solutions { rows, .. } =
        engine.query(&format!("{PREFIX}{query}"), None).unwrap()
    else {
        panic!("not a SELECT")
    };
    rows.map(|r| common::short(&r.unwrap()[0])).collect()
}

#[test]
fn literals_of_one_kind_sort_by_id_as_sparql_orders_them() {
    let (_tmp, engine) = common::engine_over("data.ttl", DATA, EngineOptions::default());
    let cases: [(&str, &[&str]); 4] = [
        // Unbound-free: blank node, IRI, then strings by code point.
        (
            "ex:name",
            &["s9", "s8", "s6", "s2", "s3", "s5", "s4", "s1", "s7"],
        ),
        // Language strings: lexical form, then tag.
        ("ex:label", &["l4", "l3", "l2", "l1"]),
        // A non-XML-Schema datatype: lexical form.
        ("ex:price", &["p1", "p3", "p2"]),
        // Numbers by value, then strings, then language strings.
        ("ex:mixed", &["m5", "m2", "m3", "m1", "m4"]),
    ];
    for (predicate, expected) in cases {
        for direction in ["ASC", "DESC"] {
            let by_id = format!("SELECT ?s {{ ?s {predicate} ?v }} ORDER BY {direction}(?v) ?s");
            let decoded = format!(
                "SELECT ?s {{ ?s {predicate} ?v }} ORDER BY {direction}(IF(true, ?v, ?v)) ?s"
            );
            let mut want: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
            if direction == "DESC" {
                want.reverse();
            }
            assert_eq!(subjects(&engine, &by_id), want, "{by_id}");
            assert_eq!(subjects(&engine, &decoded), want, "{decoded}");
        }
    }
}
