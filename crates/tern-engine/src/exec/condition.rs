//! FILTER conditions split into their top-level conjuncts, with what IDs
//! decide done on IDs:
//! - a variable against an inline number: inline numbers of one type are
//!   encoded so that ID order is value order (tern-index's `id.rs`), so
//!   `?price > 318` needs no term decoding for rows whose `?price` is an
//!   inline integer;
//! - integer arithmetic over columns ([`IntegerComparison`]);
//! - a variable (not) equal to an IRI: every term has one ID, and an IRI is
//!   `=` to exactly itself (to a literal it is unequal, not an error);
//! - `sameTerm` of two variables: equal IDs are the same term; and `=` (or
//!   `!=`) of two variables where one holds an IRI or a blank node, which
//!   equals only itself (two literals may be equal values of different
//!   terms, `1` and `01`, or unequal as one, NaN: the evaluator's);
//! - `isLiteral(?v)` (or its negation): an ID's tag, or for the
//!   vocabulary its position, says whether it is a literal (the inference
//!   rewriting puts `!isLiteral` above every triple it reads backwards).
//!
//! Rows with any other value (a number of another type, a string, an
//! unbound variable) go through the general evaluator, which implements
//! SPARQL's rules in full.

use super::integer_comparison::{comparison, IntegerComparison};
use super::Batch;
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
    on_ids: Option<OnIds>,
    general: RowEvaluator,
}

/// A conjunct that IDs decide for most rows.
enum OnIds {
    Constant(IdComparison),
    Integers(IntegerComparison),
    Iri(IriEquality),
    SameTerm(SameTermOfColumns),
    Literal(IsLiteralOfColumn),
}

impl OnIds {
    fn compile(
        ctx: &QueryContext,
        expression: &Expression,
        variables: &[Variable],
        scope: &Scope,
    ) -> Option<OnIds> {
        if let Some(c) = IdComparison::compile(expression, variables, scope) {
            return Some(OnIds::Constant(c));
        }
        if let Some(c) = IntegerComparison::compile(expression, variables, &|v| scope.value(v)) {
            return Some(OnIds::Integers(c));
        }
        if let Some(c) = SameTermOfColumns::compile(ctx, expression, variables) {
            return Some(OnIds::SameTerm(c));
        }
        if let Some(c) = IsLiteralOfColumn::compile(ctx, expression, variables) {
            return Some(OnIds::Literal(c));
        }
        IriEquality::compile(ctx, expression, variables).map(OnIds::Iri)
    }

    /// [`decide`](Self::decide) for row `i` of `batch`: a comparison of one
    /// column with a constant reads that column, the others the row.
    fn decide_in(&self, batch: &Batch, i: usize, row: &mut BatchRow) -> Option<bool> {
        match self {
            OnIds::Constant(c) => c.decide_value(batch.columns[c.column][i]),
            OnIds::Iri(c) => c.decide_value(batch.columns[c.column][i]),
            _ => self.decide(row.of(batch, i)),
        }
    }

    fn decide(&self, row: &[Id]) -> Option<bool> {
        match self {
            OnIds::Constant(c) => c.decide(row),
            OnIds::Integers(c) => c.decide(row),
            OnIds::Iri(c) => c.decide(row),
            OnIds::SameTerm(c) => c.decide(row),
            OnIds::Literal(c) => c.decide(row),
        }
    }
}

/// A row of a batch, copied out of its columns once, when something reads
/// it whole.
#[derive(Default)]
struct BatchRow {
    values: Vec<Id>,
    row: Option<usize>,
}

impl BatchRow {
    fn of(&mut self, batch: &Batch, i: usize) -> &[Id] {
        if self.row != Some(i) {
            batch.row_into(i, &mut self.values);
            self.row = Some(i);
        }
        &self.values
    }
}

/// `?column = <iri>` (or `sameTerm`, either way round), or its negation.
struct IriEquality {
    column: usize,
    iri: Id,
    negated: bool,
}

impl IriEquality {
    fn compile(
        ctx: &QueryContext,
        expression: &Expression,
        variables: &[Variable],
    ) -> Option<IriEquality> {
        use Expression as E;
        let (expression, negated) = without_negation(expression);
        let (E::Equal(a, b) | E::SameTerm(a, b)) = expression else {
            return None;
        };
        let (variable, iri) = match (a.as_ref(), b.as_ref()) {
            (E::Variable(v), E::NamedNode(n)) | (E::NamedNode(n), E::Variable(v)) => (v, n),
            _ => return None,
        };
        Some(IriEquality {
            column: variables.iter().position(|v| v == variable)?,
            // The same term always gets the same ID (a new one joins the
            // query's local vocabulary).
            iri: ctx.intern(&iri.clone().into()).ok()?,
            negated,
        })
    }

    /// Unbound values are the evaluator's (an error, which FILTER treats
    /// as false, also under `!`).
    fn decide(&self, row: &[Id]) -> Option<bool> {
        self.decide_value(row[self.column])
    }

    fn decide_value(&self, value: Id) -> Option<bool> {
        (value != Id::UNDEFINED).then_some((value == self.iri) != self.negated)
    }
}

/// `sameTerm(?a, ?b)` of two columns, or its negation (the path rewrite's
/// `!sameTerm(?d, ?x)` of a zero-or-one path): one term has one ID, so
/// equal IDs are the same term. Also `?a = ?b` (or `!=`), for rows where
/// one value is an IRI or a blank node: it equals itself and nothing else,
/// and is unequal (not an error) to a literal.
struct SameTermOfColumns {
    columns: (usize, usize),
    negated: bool,
    /// For `=`: the first literal of the stored vocabulary (IDs below it
    /// are IRIs); `None` for `sameTerm`, which IDs always decide.
    first_literal: Option<Id>,
}

impl SameTermOfColumns {
    fn compile(
        ctx: &QueryContext,
        expression: &Expression,
        variables: &[Variable],
    ) -> Option<SameTermOfColumns> {
        use Expression as E;
        let (expression, negated) = without_negation(expression);
        let (a, b, first_literal) = match expression {
            E::SameTerm(a, b) => (a, b, None),
            E::Equal(a, b) => (a, b, Some(ctx.index.first_literal().ok()?)),
            _ => return None,
        };
        let (E::Variable(a), E::Variable(b)) = (a.as_ref(), b.as_ref()) else {
            return None;
        };
        let column = |v: &Variable| variables.iter().position(|x| x == v);
        Some(SameTermOfColumns {
            columns: (column(a)?, column(b)?),
            negated,
            first_literal,
        })
    }

    /// Unbound values are the evaluator's (an error), and for `=` two
    /// literals (or terms of the query's or the updates' own vocabulary).
    fn decide(&self, row: &[Id]) -> Option<bool> {
        let (a, b) = (row[self.columns.0], row[self.columns.1]);
        if a == Id::UNDEFINED || b == Id::UNDEFINED {
            return None;
        }
        if let Some(first_literal) = self.first_literal {
            let resource = |id: Id| match id.tag() {
                Tag::BlankNode => true,
                Tag::Vocab => id < first_literal,
                _ => false,
            };
            if !resource(a) && !resource(b) {
                return None;
            }
        }
        Some((a == b) != self.negated)
    }
}

/// `isLiteral(?column)`, or its negation: inline values are literals,
/// blank nodes are not, and the vocabulary's literals are the IDs from its
/// first literal on (IRI keys sort first). Terms of the query's or the
/// updates' own vocabulary go to the evaluator.
struct IsLiteralOfColumn {
    column: usize,
    first_literal: Id,
    negated: bool,
}

impl IsLiteralOfColumn {
    fn compile(
        ctx: &QueryContext,
        expression: &Expression,
        variables: &[Variable],
    ) -> Option<IsLiteralOfColumn> {
        use Expression as E;
        let (expression, negated) = without_negation(expression);
        let E::FunctionCall(spargebra::algebra::Function::IsLiteral, arguments) = expression else {
            return None;
        };
        let [E::Variable(variable)] = arguments.as_slice() else {
            return None;
        };
        Some(IsLiteralOfColumn {
            column: variables.iter().position(|v| v == variable)?,
            first_literal: ctx.index.first_literal().ok()?,
            negated,
        })
    }

    /// Unbound values are the evaluator's (an error, also under `!`).
    fn decide(&self, row: &[Id]) -> Option<bool> {
        let value = row[self.column];
        let literal = match value.tag() {
            Tag::Undefined | Tag::LocalVocab | Tag::DeltaVocab => return None,
            Tag::BlankNode => false,
            Tag::Vocab => value >= self.first_literal,
            _ => true,
        };
        Some(literal != self.negated)
    }
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
                on_ids: OnIds::compile(&ctx, &e, variables, &scope),
                general: RowEvaluator::new(ctx.clone(), e, variables.to_vec(), scope.clone()),
            })
            .collect();
        Condition { conjuncts, text }
    }

    /// Whether every conjunct is checked on IDs (a comparison or two per
    /// row, mostly): too cheap to hand to other cores, whose waking costs
    /// more than the checks.
    pub fn on_ids(&self) -> bool {
        self.conjuncts.iter().all(|c| c.on_ids.is_some())
    }

    /// Which rows of `batch` pass: one conjunct after the other over the
    /// rows still kept, a comparison with a constant read straight from
    /// its column (no row copied, and one conjunct's checks in one tight
    /// loop), the others row by row. BSBM Q05 at 100M filters 87 K rows of
    /// its two numeric bands this way.
    pub fn select(&self, batch: &Batch) -> Result<Vec<bool>, EngineError> {
        let mut keep = vec![true; batch.len];
        let mut row = BatchRow::default();
        for conjunct in &self.conjuncts {
            for (i, kept) in keep.iter_mut().enumerate() {
                if !*kept {
                    continue;
                }
                let decided = conjunct
                    .on_ids
                    .as_ref()
                    .and_then(|c| c.decide_in(batch, i, &mut row));
                *kept = match decided {
                    Some(pass) => pass,
                    None => conjunct.general.is_true(row.of(batch, i))?,
                };
            }
        }
        Ok(keep)
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
    /// The constant may also be a variable the scope binds and the rows do
    /// not (an outer row's value in an EXISTS planned per row: `FILTER(?y
    /// > ?py)`), as an ID of an inline number.
    fn compile(
        expression: &Expression,
        variables: &[Variable],
        scope: &Scope,
    ) -> Option<IdComparison> {
        use Expression as E;
        let (a, b, accepts) = comparison(expression)?;
        // A literal, or a variable the rows do not have and the scope binds.
        let constant_of = |e: &Expression| match e {
            E::Literal(l) => tern_index::inline::encode(l.value(), l.datatype().as_str()),
            E::Variable(v) if !variables.contains(v) => scope.value(v),
            _ => None,
        };
        let (variable, constant, flipped) = match (a, b, constant_of(a), constant_of(b)) {
            (E::Variable(v), _, _, Some(constant)) => (v, constant, false),
            (_, E::Variable(v), Some(constant), _) => (v, constant, true),
            _ => return None,
        };
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
        self.decide_value(row[self.column])
    }

    fn decide_value(&self, value: Id) -> Option<bool> {
        let order = match value.tag() {
            _ if value.tag() != self.constant.tag() => return None,
            Tag::Date | Tag::DateTime => tern_index::inline::compare_times(value, self.constant)?,
            _ => value.cmp(&self.constant),
        };
        Some((self.accepts)(order))
    }
}

/// The expression under one `!`, and whether there was one.
fn without_negation(expression: &Expression) -> (&Expression, bool) {
    match expression {
        Expression::Not(inner) => (inner.as_ref(), true),
        other => (other, false),
    }
}
