//! The guard's checks on the shapes of the fault reports and beyond.

use super::algebra::algebra_depth;
use super::dismantle::dismantle;
use super::*;
use spargebra::algebra::{Expression, GraphPattern};
use spargebra::{Query, SparqlParser};

fn parse(text: &str) -> Query {
    SparqlParser::new().parse_query(text).unwrap()
}

#[test]
fn brackets_count_outside_strings_iris_and_comments_only() {
    let deep = |n: usize| format!("SELECT * WHERE {}?s ?p ?o{}", "{".repeat(n), "}".repeat(n));
    assert!(check_text(&deep(MAX_TEXT_NESTING - 1)).is_ok());
    let err = check_text(&deep(MAX_TEXT_NESTING + 1))
        .unwrap_err()
        .to_string();
    assert!(err.contains("line 1, column 272"), "{err}");
    let hidden = "{".repeat(1000);
    for text in [
        format!("SELECT * WHERE {{ ?s ?p \"{hidden}\" }}"),
        format!("SELECT * WHERE {{ ?s ?p '''{hidden}\n''' }}"),
        format!("SELECT * WHERE {{ ?s ?p ?o }} # {hidden}"),
        format!(
            "SELECT * WHERE {{ ?s ?p <http://e/{}> }}",
            "([".repeat(1000)
        ),
        format!("SELECT * WHERE {{ ?s ?p \"a\\\"{hidden}\" }}"),
    ] {
        assert!(check_text(&text).is_ok(), "{text}");
    }
    // `<` followed by a space is "less than", and what follows counts.
    let less = format!(
        "SELECT * WHERE {{ ?s ?p ?o FILTER(?o < {}1{}) }}",
        "(".repeat(300),
        ")".repeat(300)
    );
    assert!(check_text(&less).is_err());
}

#[test]
fn chains_the_parser_builds_without_recursing_are_measured() {
    let union = |n: usize| {
        format!(
            "SELECT * WHERE {{ {} }}",
            vec!["{ ?s ?p ?o }"; n].join(" UNION ")
        )
    };
    // Project, then n - 1 unions, then a basic graph pattern.
    assert_eq!(algebra_depth(&parse(&union(10))), 11);
    assert!(check_algebra(parse(&union(MAX_ALGEBRA_DEPTH - 10))).is_ok());
    let err = check_algebra(parse(&union(MAX_ALGEBRA_DEPTH + 10)))
        .unwrap_err()
        .to_string();
    assert!(err.contains("levels deep; the limit is"), "{err}");
    let sum = format!("ASK {{ FILTER(1{} > 0) }}", " + 1".repeat(50));
    assert!(algebra_depth(&parse(&sum)) > 50);
    let exists = "ASK { FILTER EXISTS { FILTER EXISTS { ?s <http://e/p>*/<http://e/q>+ ?o } } }";
    assert!(algebra_depth(&parse(exists)) >= 7);
}

#[test]
fn a_query_of_any_depth_is_dropped_without_recursion() {
    // 200,000 levels: dropping this the ordinary way overflows a test
    // thread's 2 MiB stack.
    let mut pattern = GraphPattern::Bgp { patterns: vec![] };
    let mut expression = Expression::Literal(oxrdf::Literal::from(1));
    for _ in 0..100_000 {
        pattern = GraphPattern::Union {
            left: Box::new(pattern),
            right: Box::new(GraphPattern::Bgp { patterns: vec![] }),
        };
        expression = Expression::Not(Box::new(expression));
    }
    let pattern = GraphPattern::Filter {
        expr: expression,
        inner: Box::new(pattern),
    };
    let query = Query::Ask {
        dataset: None,
        pattern,
        base_iri: None,
    };
    assert_eq!(algebra_depth(&query), 100_002);
    dismantle(query);
}

/// `n` nested `open`…`close` around `inner`.
fn nest(open: &str, inner: &str, close: &str, n: usize) -> String {
    format!("{}{inner}{}", open.repeat(n), close.repeat(n))
}

#[test]
fn operands_the_parser_reads_twice_are_counted_twice() {
    // Each of these doubles the parser's work per level (measured: 22
    // levels took 3 to 13 s before this check).
    let shapes = [
        ("!(", "false", ")"),
        ("REGEX(", "\"a\"", ", \"a\")"),
        ("substr(", "\"a\"", ", 1)"),
        ("Replace(", "\"a\"", ", \"a\", \"b\")"),
        ("!EXISTS { FILTER(", "true", ") }"),
    ];
    for (open, inner, close) in shapes {
        let text = format!("ASK {{ FILTER({}) }}", nest(open, inner, close, 40));
        let err = check_text(&text).unwrap_err().to_string();
        assert!(err.contains("too long to parse"), "{text}: {err}");
        let text = format!("ASK {{ FILTER({}) }}", nest(open, inner, close, 8));
        assert!(check_text(&text).is_ok(), "{text}");
    }
    // Brackets and functions the parser reads once cost nothing extra.
    for (open, inner, close) in [
        ("(", "1", ")"),
        ("STR(", "1", ")"),
        ("<http://e/f>(", "1", ")"),
    ] {
        let text = format!("ASK {{ FILTER({} = 1) }}", nest(open, inner, close, 200));
        assert!(check_text(&text).is_ok(), "{text}");
    }
    // Names that merely contain the keywords are not the keywords.
    let text = format!(
        "ASK {{ FILTER({} = 1) }}",
        nest("ex:regex(?regex_", "1", ")", 200).replace("_(", "_ + ex:substr(")
    );
    assert!(check_text(&text).is_ok(), "{text}");
    // `!=` is no negation.
    let text = format!("ASK {{ FILTER(1 != {}) }}", nest("(", "1", ")", 200));
    assert!(check_text(&text).is_ok());
}

#[test]
fn a_run_of_negations_counts_as_nesting() {
    let run = |n: usize| format!("ASK {{ FILTER({}true) }}", "!".repeat(n));
    assert!(check_text(&run(MAX_TEXT_NESTING - 10)).is_ok());
    assert!(check_text(&run(100_000)).is_err());
    assert!(check_text(&format!("ASK {{ FILTER({}true) }}", "! ".repeat(300))).is_err());
}

#[test]
fn long_queries_without_repeats_pass() {
    // A megabyte of ordinary patterns reads each byte once.
    let text = format!(
        "SELECT * WHERE {{ {} }}",
        "?s <http://example.org/p> \"a literal with ((( and {{{ inside\" . ".repeat(20_000)
    );
    assert!(text.len() > 1 << 20);
    assert!(check_text(&text).is_ok());
}

#[test]
fn texts_over_the_length_limit_are_refused_unread() {
    let text = format!("ASK {{}} #{}", "x".repeat(MAX_QUERY_BYTES));
    let err = check_text(&text).unwrap_err().to_string();
    assert!(err.contains("bytes long; the limit is"), "{err}");
}
