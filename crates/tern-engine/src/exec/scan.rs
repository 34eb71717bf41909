//! Index scan of one triple pattern. Constants become the bound prefix of the
//! permutation that has them as leading columns; the graph column (last in
//! every permutation) is filtered row by row.

use super::{Batch, Operator};
use crate::context::{GraphSet, QueryContext};
use crate::profile::OperatorInfo;
use crate::suspend::{bad_state, OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tern_index::permutation::ScanIter;
use tern_index::{Id, Permutation, ScanRange};

/// One position of a triple pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PatternTerm {
    Constant(Id),
    /// A variable, given as its output column.
    Variable(usize),
}

/// Which graphs a pattern matches in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GraphScope {
    /// The query's default graph.
    Default,
    /// `GRAPH <iri>`.
    Named(Id),
    /// `GRAPH ?g`: any named graph; the graph goes to this output column.
    NamedVariable(usize),
}

pub struct Scan {
    ctx: Arc<QueryContext>,
    variables: Vec<Variable>,
    terms: [PatternTerm; 3],
    graph: GraphScope,
    perm: Permutation,
    iter: ScanIter,
    /// The triple of the last row emitted, to merge graphs of a default graph
    /// that spans several graphs.
    last_triple: Option<[u64; 3]>,
    /// The last index row read: where a resumed scan continues.
    last_row: Option<[u64; 4]>,
    blocks_read: Arc<AtomicU64>,
}

/// The permutation with the pattern's constants as leading columns, and those
/// constants in that order. With the predicate and one more position bound,
/// the predicate leads: an index join then looks all its rows up in one
/// predicate's blocks, which stay cached, instead of one block per subject.
fn bound_prefix(terms: &[PatternTerm; 3]) -> (Permutation, Vec<Id>) {
    let bound: Vec<usize> = (0..3)
        .filter(|&i| matches!(terms[i], PatternTerm::Constant(_)))
        .collect();
    let perm = match bound.as_slice() {
        [0, 1] => Permutation::Pso,
        [1, 2] => Permutation::Pos,
        _ => Permutation::for_bound(&bound, None),
    };
    let prefix = perm.order()[..bound.len()]
        .iter()
        .filter_map(|&pos| match terms[pos] {
            PatternTerm::Constant(id) => Some(id),
            PatternTerm::Variable(_) => None,
        })
        .collect();
    (perm, prefix)
}

impl Scan {
    pub fn new(
        ctx: Arc<QueryContext>,
        variables: Vec<Variable>,
        terms: [PatternTerm; 3],
        graph: GraphScope,
    ) -> Scan {
        let (perm, prefix) = bound_prefix(&terms);
        let iter = ctx.index.scan(perm, &prefix, ScanRange::ALL);
        Scan {
            ctx,
            variables,
            terms,
            graph,
            perm,
            iter,
            last_triple: None,
            last_row: None,
            blocks_read: Arc::default(),
        }
    }

    /// Exact number of index rows the pattern's constants select (graphs and
    /// repeated variables not yet taken into account): the optimizer's estimate.
    pub fn estimate(ctx: &QueryContext, terms: &[PatternTerm; 3]) -> Result<u64, EngineError> {
        let (perm, prefix) = bound_prefix(terms);
        Ok(ctx.index.count(perm, &prefix, ScanRange::ALL)?)
    }

    /// The output column the scan's rows are sorted on: the variable right
    /// after the bound columns in the permutation's order.
    pub fn sorted_column(terms: &[PatternTerm; 3]) -> Option<usize> {
        let (perm, prefix) = bound_prefix(terms);
        let next = *perm.order().get(prefix.len())?;
        match terms.get(next)? {
            PatternTerm::Variable(column) => Some(*column),
            PatternTerm::Constant(_) => None,
        }
    }

    /// The last row read (and triple produced, when graphs are merged).
    fn position(&self) -> OperatorState {
        let mut numbers = Vec::with_capacity(7);
        if let Some(row) = self.last_row {
            numbers.extend_from_slice(&row);
            if let Some(triple) = self.last_triple {
                numbers.extend_from_slice(&triple);
            }
        }
        OperatorState::new(numbers, Vec::new())
    }

    fn in_named_set(&self, graph: u64) -> bool {
        graph != Id::DEFAULT_GRAPH.0
            && match &self.ctx.named_graphs {
                GraphSet::Only(list) => list.contains(&Id(graph)),
                _ => true,
            }
    }

    /// Whether a row in `graph` belongs to the scope; `merge` tells whether
    /// equal triples from different graphs must be merged.
    fn graph_matches(&self, graph: u64) -> (bool, bool) {
        match self.graph {
            GraphScope::Default => match &self.ctx.default_graph {
                GraphSet::IndexDefault => (graph == Id::DEFAULT_GRAPH.0, false),
                GraphSet::All => (true, true),
                GraphSet::AllNamed => (graph != Id::DEFAULT_GRAPH.0, true),
                GraphSet::Only(list) => (list.contains(&Id(graph)), true),
            },
            GraphScope::Named(g) => (graph == g.0 && self.in_named_set(graph), false),
            GraphScope::NamedVariable(_) => (self.in_named_set(graph), false),
        }
    }
}

impl Operator for Scan {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn describe(&self) -> OperatorInfo {
        let names = ["S", "P", "O"];
        let terms: Vec<String> = self
            .terms
            .iter()
            .map(|t| match *t {
                PatternTerm::Constant(id) => match self.ctx.term(id) {
                    Ok(Some(term)) => term.to_string(),
                    _ => format!("{id:?}"),
                },
                PatternTerm::Variable(c) => self.variables[c].to_string(),
            })
            .collect();
        let order: String = self.perm.order().iter().map(|&p| names[p]).collect();
        let graph = match self.graph {
            GraphScope::Default => String::new(),
            GraphScope::Named(g) => format!(" in graph {g:?}"),
            GraphScope::NamedVariable(c) => format!(" in graph {}", self.variables[c]),
        };
        OperatorInfo {
            name: "Scan",
            detail: format!("{order} {}{graph}", terms.join(" ")),
            blocks_read: Some(self.blocks_read.clone()),
        }
    }

    fn save(&mut self, _: &Stash) -> Result<OperatorState, EngineError> {
        Ok(self.position())
    }

    /// A scan resumes after the last row it read, and its batches are the
    /// matching parts of whole blocks: the same batch comes again.
    fn checkpoint(&self) -> Option<OperatorState> {
        Some(self.position())
    }

    fn restore(&mut self, state: OperatorState, _: &Stash) -> Result<(), EngineError> {
        let numbers = &state.numbers;
        match numbers.len() {
            0 => return Ok(()),
            4 | 7 => {}
            n => {
                return Err(bad_state(format!(
                    "a scan position has 4 or 7 numbers, not {n}"
                )))
            }
        }
        let row = [numbers[0], numbers[1], numbers[2], numbers[3]];
        self.iter.resume_after(row);
        self.last_row = Some(row);
        if numbers.len() == 7 {
            self.last_triple = Some([numbers[4], numbers[5], numbers[6]]);
        }
        Ok(())
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        let width = self.variables.len();
        loop {
            self.ctx.check()?;
            let Some(rows) = self.iter.next() else {
                return Ok(None);
            };
            let rows = rows?;
            self.blocks_read
                .store(self.iter.blocks_read(), Ordering::Relaxed);
            if !rows.is_empty() {
                self.last_row = Some(rows.row(rows.len() - 1));
            }
            let mut out = Batch::with_columns(width);
            let mut row_out = vec![Id::UNDEFINED; width];
            'rows: for i in 0..rows.len() {
                let stored = rows.row(i);
                let quad = self.perm.quad_of(stored);
                let (in_scope, merge) = self.graph_matches(quad[3]);
                if !in_scope {
                    continue;
                }
                let triple = [quad[0], quad[1], quad[2]];
                if merge {
                    if self.last_triple == Some(triple) {
                        continue;
                    }
                    self.last_triple = Some(triple);
                }
                row_out.iter_mut().for_each(|v| *v = Id::UNDEFINED);
                for (term, &value) in self.terms.iter().zip(&triple) {
                    if let PatternTerm::Variable(column) = *term {
                        let value = Id(value);
                        if row_out[column] != Id::UNDEFINED && row_out[column] != value {
                            continue 'rows; // a repeated variable with two values
                        }
                        row_out[column] = value;
                    }
                }
                if let GraphScope::NamedVariable(column) = self.graph {
                    let value = Id(quad[3]);
                    if row_out[column] != Id::UNDEFINED && row_out[column] != value {
                        continue;
                    }
                    row_out[column] = value;
                }
                out.push_row(&row_out);
            }
            if out.len > 0 {
                return Ok(Some(out));
            }
        }
    }
}
