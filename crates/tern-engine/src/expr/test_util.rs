//! Test helpers: evaluate SPARQL expression text through the real parser.

use super::{evaluate, EvalContext};
use oxrdf::{Literal, NamedNode, Term, Variable};
use spargebra::algebra::{Expression, GraphPattern};
use spargebra::{Query, SparqlParser};

const PREFIXES: &str = "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> \
     PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> \
     PREFIX ex: <http://example.com/> ";

/// Parses `expr` as the expression of `SELECT (expr AS ?result) {}`.
pub(crate) fn parse_expr(expr: &str) -> Expression {
    let query = SparqlParser::new()
        .parse_query(&format!("{PREFIXES} SELECT ({expr} AS ?result) {{}}"))
        .unwrap_or_else(|e| panic!("cannot parse {expr}: {e}"));
    let Query::Select { pattern, .. } = query else {
        panic!("not a SELECT")
    };
    find_extend(&pattern).unwrap_or_else(|| panic!("no BIND in {pattern:?}"))
}

fn find_extend(pattern: &GraphPattern) -> Option<Expression> {
    match pattern {
        GraphPattern::Extend { expression, .. } => Some(expression.clone()),
        GraphPattern::Project { inner, .. } => find_extend(inner),
        _ => None,
    }
}

/// A context with a fixed NOW, the base `http://example.com/base/`, and an
/// EXISTS that is true when `?x` is bound.
pub(crate) fn with_context<T>(f: impl FnOnce(&EvalContext<'_>) -> T) -> T {
    let exists = |_: &GraphPattern, binding: &dyn Fn(&Variable) -> Option<Term>| {
        binding(&Variable::new_unchecked("x")).is_some()
    };
    let now = std::sync::OnceLock::from(
        "2024-03-05T10:20:30.5Z"
            .parse::<oxsdatatypes::DateTime>()
            .unwrap(),
    );
    let ctx = EvalContext {
        now: &now,
        base_iri: Some(oxiri::Iri::parse("http://example.com/base/".to_owned()).unwrap()),
        exists: &exists,
    };
    f(&ctx)
}

/// Evaluates `expr` with `?x` bound to `x` (when given).
pub(crate) fn eval_with(expr: &str, x: Option<Term>) -> Option<Term> {
    let expr = parse_expr(expr);
    let binding = move |v: &Variable| (v.as_str() == "x").then(|| x.clone()).flatten();
    with_context(|ctx| evaluate(&expr, &binding, ctx))
}

/// Evaluates `expr` with no variable bound.
pub(crate) fn eval(expr: &str) -> Option<Term> {
    eval_with(expr, None)
}

/// `Some("lexical"^^xsd:local)`.
pub(crate) fn lit(lexical: &str, xsd_local: &str) -> Option<Term> {
    Some(typed(lexical, xsd_local))
}

/// `"lexical"^^xsd:local`.
pub(crate) fn typed(lexical: &str, xsd_local: &str) -> Term {
    Literal::new_typed_literal(
        lexical,
        NamedNode::new_unchecked(format!("http://www.w3.org/2001/XMLSchema#{xsd_local}")),
    )
    .into()
}

/// `Some("value")`.
pub(crate) fn simple(value: &str) -> Option<Term> {
    Some(Literal::new_simple_literal(value).into())
}

/// `Some("value"@language)`.
pub(crate) fn lang(value: &str, language: &str) -> Option<Term> {
    Some(
        Literal::new_language_tagged_literal(value, language)
            .unwrap()
            .into(),
    )
}

/// `Some(<iri>)`.
pub(crate) fn iri(iri: &str) -> Option<Term> {
    Some(NamedNode::new_unchecked(iri).into())
}

/// `Some(true/false)` as xsd:boolean.
pub(crate) fn boolean(value: bool) -> Option<Term> {
    lit(if value { "true" } else { "false" }, "boolean")
}
