//! SPARQL 1.1 expression evaluation over `oxrdf` terms (spec section 17).
//!
//! Everything works on plain [`Term`]s: a literal is parsed into a typed
//! value ([`value::Value`]) only when an operator needs it, so the engine can
//! hand in terms decoded from the index without any extra representation.
//!
//! Errors and unbound values are both `None`, which is what SPARQL calls an
//! "error": the error-tolerant operators (`||`, `&&`, `IF`, `COALESCE`,
//! `BOUND`, `IN`) are the only places that look at it.
//!
//! Layout, one topic per file:
//! - `eval`: the recursive evaluator, logical operators, EBV, dispatch of
//!   built-in calls;
//! - `value`: typed views of literals and constructors of result literals;
//! - `compare`: `=`, `<` & co., `sameTerm` and the ORDER BY total order;
//! - `numeric`: type promotion, arithmetic, `ABS`/`CEIL`/`FLOOR`/`ROUND`;
//! - `string`: string functions; `pattern`: `REGEX`/`REPLACE`;
//! - `datetime`: date parts, `NOW`, date/duration arithmetic;
//! - `term`: term accessors and constructors (`STR`, `IRI`, `STRDT`...);
//! - `random`: `RAND`, `UUID`, `STRUUID`, `BNODE`;
//! - `hash`: `MD5`, `SHA*`; `cast`: XSD constructor functions;
//! - `aggregate`: [`Accumulator`] for `GROUP BY` aggregates;
//! - `row_eval`: [`RowEvaluator`], the bridge from rows of IDs to terms and
//!   back, which operators use;
//! - `scope`: [`Scope`], the substituted values and the EXISTS answerer
//!   that the planner hands in;
//! - `variables`: which variables an expression reads; blank-node variables.
//!
//! Uses only the query context (`context`): the operators (`exec`) and the
//! planner (`plan`) use it.

mod aggregate;
mod cast;
mod compare;
mod datetime;
mod eval;
mod hash;
mod numeric;
mod pattern;
mod random;
mod row_eval;
mod scope;
mod string;
mod term;
#[cfg(test)]
mod test_util;
mod value;
mod variables;

use oxrdf::{Term, Variable};
use spargebra::algebra::{Expression, GraphPattern};

pub use aggregate::Accumulator;
pub use numeric::numeric_double;
pub use row_eval::{MemoizedEvaluator, RowEvaluator};
pub use scope::{PatternTest, Scope};
pub use variables::{
    blank_variable, expression_variables, is_blank_variable, kind_only_variables, sub_expressions,
    whole_read_variables,
};

/// What expressions may need from the running query.
pub struct EvalContext<'a> {
    /// NOW() — fixed for the whole query, read from the clock on first use.
    pub now: &'a std::sync::OnceLock<oxsdatatypes::DateTime>,
    /// Base IRI for IRI()/URI() on relative strings.
    pub base_iri: Option<oxiri::Iri<String>>,
    /// Evaluates EXISTS { pattern } for the current solution; provided by the engine.
    // Spelled out rather than hidden behind a type alias: this is the
    // signature the engine implements.
    #[allow(clippy::type_complexity)]
    pub exists: &'a dyn Fn(&GraphPattern, &dyn Fn(&Variable) -> Option<Term>) -> bool,
}

/// Evaluates `expr` for one solution. `None` means an expression error or
/// unbound (SPARQL's "error").
///
/// `BNODE(str)` returns the same blank node for the same string within one
/// call of this function and a different one in every other call: each call
/// draws a random salt (only when `BNODE(str)` is used) and the node id is a
/// hash of salt and string. Calling this once per solution thus gives the
/// spec's "same string in the same solution → same node"; two separate
/// `evaluate` calls on one solution (e.g. two `BIND`s) get different nodes.
pub fn evaluate(
    expr: &Expression,
    binding: &dyn Fn(&Variable) -> Option<Term>,
    ctx: &EvalContext<'_>,
) -> Option<Term> {
    eval::Evaluator::new(binding, ctx).eval(expr)
}

/// SPARQL effective boolean value (spec 17.2.2): booleans, numerics (false
/// for zero and NaN), strings (false when empty; language-tagged strings
/// count as plain literals as in the spec's text). Ill-typed booleans and
/// numerics are false; everything else is an error (`None`).
pub fn effective_boolean_value(term: &Term) -> Option<bool> {
    eval::effective_boolean_value(term)
}

/// The total order used by ORDER BY: unbound < blank nodes < IRIs < literals.
///
/// Literals are grouped by kind (numerics, booleans, strings,
/// language-tagged strings, the date/time types, durations, then everything
/// else); inside a kind they compare by value as `<` does (numerics across
/// types, NaN first; dates without a timezone as if in UTC), and ties — equal
/// values with different terms, or values `<` cannot order — fall back to
/// lexical form, then datatype IRI, then language tag. The result is a total
/// order, safe for `sort_by`.
pub fn order_cmp(a: Option<&Term>, b: Option<&Term>) -> std::cmp::Ordering {
    compare::order_cmp(a, b)
}

/// A numeric literal's place among the numerics of ORDER BY: its value as
/// a double. Two keys with places that differ order as their places do in
/// [`order_cmp`], so a sort can compute them once per row and compare
/// doubles instead of parsing literals on every comparison; equal places
/// (and keys without one) are left to [`order_cmp`]. `None` for anything
/// but a numeric literal, and for NaN.
pub fn numeric_order_place(term: Option<&Term>) -> Option<f64> {
    compare::numeric_order_place(term)
}
