//! Evaluates expressions on rows of IDs: decodes the terms an expression reads,
//! calls the term-level evaluator in [`crate::expr`], and turns results back
//! into IDs.
//!
//! A variable the expression reads only for its kind (`LANG(?o)`,
//! `isIRI(?o)`...: [`kind_only_variables`]) is not decoded when the
//! vocabulary's kinds say it is an IRI or a simple literal: a stand-in of
//! the same kind takes its place, since every IRI has the same kind,
//! language and datatype, and so has every simple literal. Language
//! strings and typed literals are decoded (their tag or datatype counts).

use super::{expression_variables, kind_only_variables, Scope};
use crate::context::QueryContext;
use crate::{expr, EngineError};
use oxrdf::{Literal, NamedNode, Term, Variable};
use spargebra::algebra::Expression;
use std::cell::RefCell;
use std::sync::{Arc, OnceLock};
use tern_index::vocab::TermKind;
use tern_index::Id;

pub struct RowEvaluator {
    ctx: Arc<QueryContext>,
    expression: Expression,
    variables: Vec<Variable>,
    scope: Arc<Scope>,
    /// The column whose value the expression is, when it is a plain
    /// variable of the rows.
    plain_column: Option<usize>,
    /// The variables read only for their kind (see the module comment).
    kind_only: Vec<Variable>,
    /// When the expression reads one variable, only for its kind: its
    /// value for every IRI and for every simple literal, computed once.
    by_kind: Option<ValuesByKind>,
}

/// The value of an expression of one variable read only for its kind, for
/// the two kinds whose terms all give the same value.
struct ValuesByKind {
    variable: Variable,
    iri: OnceLock<Option<Term>>,
    simple_literal: OnceLock<Option<Term>>,
}

impl RowEvaluator {
    /// An evaluator of `expression` on rows of `variables`, inside the
    /// pattern `scope` describes.
    pub fn new(
        ctx: Arc<QueryContext>,
        expression: Expression,
        variables: Vec<Variable>,
        scope: Arc<Scope>,
    ) -> RowEvaluator {
        let plain_column = match &expression {
            Expression::Variable(v) if scope.value(v).is_none() => {
                variables.iter().position(|x| x == v)
            }
            _ => None,
        };
        let kind_only: Vec<Variable> = kind_only_variables(&expression).into_iter().collect();
        let mut read = rustc_hash::FxHashSet::default();
        let by_kind = match expression_variables(&expression, &mut read) {
            Some(()) if read.len() == 1 && kind_only.len() == 1 => Some(ValuesByKind {
                variable: kind_only[0].clone(),
                iri: OnceLock::new(),
                simple_literal: OnceLock::new(),
            }),
            _ => None,
        };
        RowEvaluator {
            kind_only,
            by_kind,
            ctx,
            expression,
            variables,
            scope,
            plain_column,
        }
    }

    /// The ID of `variable` in `row`; substituted by an enclosing EXISTS,
    /// the variable is a constant here, whatever the row says. `None` for
    /// a variable the rows do not have.
    fn id_of(&self, variable: &Variable, row: &[Id]) -> Option<Id> {
        match self.scope.value(variable) {
            Some(id) => Some(id),
            None => Some(row[self.variables.iter().position(|x| x == variable)?]),
        }
    }

    /// The term of `id`, or for a variable read only for its kind and a
    /// stored IRI or simple literal, a stand-in of the same kind: no
    /// vocabulary block decoded.
    fn term_for(&self, variable: &Variable, id: Id) -> Result<Option<Term>, EngineError> {
        if !self.kind_only.is_empty() && self.kind_only.contains(variable) {
            match self.ctx.index.term_kind(id) {
                Some(TermKind::Iri) => {
                    return Ok(Some(NamedNode::new_unchecked("urn:tern:an-iri").into()))
                }
                Some(TermKind::SimpleLiteral) => {
                    return Ok(Some(Literal::new_simple_literal("").into()))
                }
                _ => {}
            }
        }
        self.ctx.term(id)
    }

    /// The column the expression just reads, if it is a plain variable of
    /// the rows: its value is that column's ID, nothing to decode.
    pub fn plain_column(&self) -> Option<usize> {
        self.plain_column
    }

    /// The value of the expression for `row`; `None` for SPARQL errors.
    pub fn evaluate(&self, row: &[Id]) -> Result<Option<Term>, EngineError> {
        let Some(by_kind) = &self.by_kind else {
            return self.evaluate_row(row);
        };
        let once = match (self.id_of(&by_kind.variable, row))
            .and_then(|id| self.ctx.index.term_kind(id))
        {
            Some(TermKind::Iri) => &by_kind.iri,
            Some(TermKind::SimpleLiteral) => &by_kind.simple_literal,
            _ => return self.evaluate_row(row),
        };
        if let Some(value) = once.get() {
            return Ok(value.clone());
        }
        let value = self.evaluate_row(row)?;
        let _ = once.set(value.clone());
        Ok(value)
    }

    /// The value of the expression for `row`, evaluated.
    fn evaluate_row(&self, row: &[Id]) -> Result<Option<Term>, EngineError> {
        let failure: RefCell<Option<EngineError>> = RefCell::new(None);
        let binding = |v: &Variable| -> Option<Term> {
            match self.term_for(v, self.id_of(v, row)?) {
                Ok(term) => term,
                Err(e) => {
                    failure.borrow_mut().get_or_insert(e);
                    None
                }
            }
        };
        let exists = |pattern: &spargebra::algebra::GraphPattern,
                      _: &dyn Fn(&Variable) -> Option<Term>|
         -> bool {
            match self.scope.exists(&self.ctx, pattern, &self.variables, row) {
                Ok(found) => found,
                Err(e) => {
                    failure.borrow_mut().get_or_insert(e);
                    false
                }
            }
        };
        let eval_ctx = expr::EvalContext {
            now: &self.ctx.now,
            base_iri: self.ctx.base_iri.clone(),
            exists: &exists,
        };
        let value = expr::evaluate(&self.expression, &binding, &eval_ctx);
        match failure.into_inner() {
            Some(e) => Err(e),
            None => Ok(value),
        }
    }

    /// Effective boolean value; errors count as false (as FILTER requires).
    pub fn is_true(&self, row: &[Id]) -> Result<bool, EngineError> {
        Ok(self
            .evaluate(row)?
            .and_then(|t| expr::effective_boolean_value(&t))
            .unwrap_or(false))
    }

    /// The value as an ID, [`Id::UNDEFINED`] for errors.
    pub fn evaluate_id(&self, row: &[Id]) -> Result<Id, EngineError> {
        if let Some(column) = self.plain_column {
            return Ok(row[column]);
        }
        match self.evaluate(row)? {
            Some(term) => self.ctx.intern(&term),
            None => Ok(Id::UNDEFINED),
        }
    }
}

/// Most values a [`MemoizedEvaluator`] remembers.
const MEMO_ENTRIES: usize = 1 << 16;

/// A [`RowEvaluator`] for expressions of one variable that remembers the
/// value for each ID it saw: aggregates such as
/// `AVG(xsd:float(xsd:string(?price)))` see the same few values in many rows,
/// and decoding, casting and parsing them costs more than the aggregate.
pub struct MemoizedEvaluator {
    evaluator: RowEvaluator,
    /// The column the expression reads, when it reads exactly one and is a
    /// function of it (no EXISTS, random or fresh-term functions).
    column: Option<usize>,
    memo: std::cell::RefCell<rustc_hash::FxHashMap<Id, Option<Term>>>,
}

impl MemoizedEvaluator {
    pub fn new(
        ctx: Arc<QueryContext>,
        expression: Expression,
        variables: Vec<Variable>,
        scope: Arc<Scope>,
    ) -> MemoizedEvaluator {
        let mut read = rustc_hash::FxHashSet::default();
        let column = match expression_variables(&expression, &mut read) {
            Some(()) if read.len() == 1 => read
                .iter()
                .next()
                .and_then(|v| variables.iter().position(|x| x == v)),
            _ => None,
        };
        MemoizedEvaluator {
            evaluator: RowEvaluator::new(ctx, expression, variables, scope),
            column,
            memo: std::cell::RefCell::default(),
        }
    }

    /// The value of the expression for `row`; `None` for SPARQL errors.
    pub fn evaluate(&self, row: &[Id]) -> Result<Option<Term>, EngineError> {
        let Some(column) = self.column else {
            return self.evaluator.evaluate(row);
        };
        let id = row[column];
        if let Some(value) = self.memo.borrow().get(&id) {
            return Ok(value.clone());
        }
        let value = self.evaluator.evaluate(row)?;
        let mut memo = self.memo.borrow_mut();
        if memo.len() < MEMO_ENTRIES {
            memo.insert(id, value.clone());
        }
        Ok(value)
    }
}

impl std::fmt::Display for RowEvaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.expression.fmt(f)
    }
}
