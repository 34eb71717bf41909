//! FILTER conditions split into their top-level conjuncts, with comparisons
//! of a variable against an inline number done on IDs.
//!
//! Inline numbers of one type are encoded so that ID order is value order
//! (tern-index's `id.rs`), so `?price > 318` needs no term decoding for rows
//! whose `?price` is an inline integer. Rows with any other value (a number
//! of another type, a string, an unbound variable) go through the general
//! evaluator, which implements SPARQL's rules in full.

use crate::context::QueryContext;
use crate::expr::RowEvaluator;
use crate::expr::Scope;
use crate::EngineError;
use oxrdf::Variable;
use spargebra::algebra::Expression;
use std::cmp::Ordering;
use std::sync::Arc;
use tern_index::{Id, Tag};

pub struct Condition {
    /// All must be true for the row to pass: `A && B` is true exactly when
    /// both are (an error in either makes it false or an error, which FILTER
    /// treats alike).
    conjuncts: Vec<Conjunct>,
    text: String,
}

struct Conjunct {
    on_ids: Option<IdComparison>,
    general: RowEvaluator,
}

/// `?column <op> constant`, `constant` an inline number.
struct IdComparison {
    column: usize,
    constant: Id,
    /// The orderings of (value, constant) for which the comparison is true.
    accepts: fn(Ordering) -> bool,
}

impl Condition {
    pub fn new(
        ctx: Arc<QueryContext>,
        expression: Expression,
        variables: &[Variable],
        scope: Arc<Scope>,
    ) -> Condition {
        let text = expression.to_string();
        let mut parts = Vec::new();
        split_and(expression, &mut parts);
        let conjuncts = parts
            .into_iter()
            .map(|e| Conjunct {
                on_ids: IdComparison::compile(&e, variables),
                general: RowEvaluator::new(ctx.clone(), e, variables.to_vec(), scope.clone()),
            })
            .collect();
        Condition { conjuncts, text }
    }

    pub fn is_true(&self, row: &[Id]) -> Result<bool, EngineError> {
        for conjunct in &self.conjuncts {
            let pass = match conjunct.on_ids.as_ref().and_then(|c| c.decide(row)) {
                Some(pass) => pass,
                None => conjunct.general.is_true(row)?,
            };
            if !pass {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

impl std::fmt::Display for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let on_ids = self.conjuncts.iter().filter(|c| c.on_ids.is_some()).count();
        write!(f, "{}", self.text)?;
        if on_ids > 0 {
            write!(f, " ({on_ids} of {} on IDs)", self.conjuncts.len())?;
        }
        Ok(())
    }
}

fn split_and(expression: Expression, out: &mut Vec<Expression>) {
    match expression {
        Expression::And(a, b) => {
            split_and(*a, out);
            split_and(*b, out);
        }
        other => out.push(other),
    }
}

impl IdComparison {
    fn compile(expression: &Expression, variables: &[Variable]) -> Option<IdComparison> {
        use Expression as E;
        let (a, b, accepts): (_, _, fn(Ordering) -> bool) = match expression {
            E::Greater(a, b) => (a, b, |o| o == Ordering::Greater),
            E::GreaterOrEqual(a, b) => (a, b, |o| o != Ordering::Less),
            E::Less(a, b) => (a, b, |o| o == Ordering::Less),
            E::LessOrEqual(a, b) => (a, b, |o| o != Ordering::Greater),
            E::Equal(a, b) => (a, b, |o| o == Ordering::Equal),
            _ => return None,
        };
        let (variable, literal, flipped) = match (a.as_ref(), b.as_ref()) {
            (E::Variable(v), E::Literal(l)) => (v, l, false),
            (E::Literal(l), E::Variable(v)) => (v, l, true),
            _ => return None,
        };
        let constant = tern_index::inline::encode(literal.value(), literal.datatype().as_str())?;
        // Doubles stay with the evaluator: NaN compares false with
        // everything and -0 equals 0, which ID order does not know.
        if !matches!(
            constant.tag(),
            Tag::Integer | Tag::Decimal | Tag::Date | Tag::DateTime
        ) {
            return None;
        }
        let column = variables.iter().position(|v| v == variable)?;
        let accepts: fn(Ordering) -> bool = if flipped {
            // constant <op> ?v  ⇔  ?v <op reversed> constant
            match expression {
                E::Greater(..) => |o| o == Ordering::Less,
                E::GreaterOrEqual(..) => |o| o != Ordering::Greater,
                E::Less(..) => |o| o == Ordering::Greater,
                E::LessOrEqual(..) => |o| o != Ordering::Less,
                _ => accepts,
            }
        } else {
            accepts
        };
        Some(IdComparison {
            column,
            constant,
            accepts,
        })
    }

    /// The answer for this row if the IDs decide it.
    fn decide(&self, row: &[Id]) -> Option<bool> {
        let value = row[self.column];
        let order = match value.tag() {
            _ if value.tag() != self.constant.tag() => return None,
            Tag::Date | Tag::DateTime => tern_index::inline::compare_times(value, self.constant)?,
            _ => value.cmp(&self.constant),
        };
        Some((self.accepts)(order))
    }
}
