//! Property paths: `p`, `^p`, `a/b`, `a|b`, `!(…)`, `p?`, `p*`, `p+`, as an
//! operator that resolves the path's IRIs once ([`id_path`]), walks the
//! index from the bound ends ([`walker`]) and materializes the pairs.

mod id_path;
mod walker;

use super::profile::OperatorInfo;
use super::scan::{GraphScope, PatternTerm};
use super::{Batch, Operator};
use crate::context::{row_vec_bytes, MemoryCharge, QueryContext};
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use id_path::IdPath;
use oxrdf::Variable;
use spargebra::algebra::PropertyPathExpression as Path;
use std::sync::Arc;
use tern_index::Id;
use walker::Walker;

pub struct PathScan {
    ctx: Arc<QueryContext>,
    variables: Vec<Variable>,
    subject: PatternTerm,
    object: PatternTerm,
    path: Option<Path>,
    graph: GraphScope,
    output: std::vec::IntoIter<Vec<Id>>,
    /// The pairs and rows it materializes, in the query's memory account.
    memory: MemoryCharge,
}

impl PathScan {
    pub fn new(
        ctx: Arc<QueryContext>,
        variables: Vec<Variable>,
        subject: PatternTerm,
        path: Path,
        object: PatternTerm,
        graph: GraphScope,
    ) -> PathScan {
        PathScan {
            memory: ctx.memory_charge(),
            ctx,
            variables,
            subject,
            object,
            path: Some(path),
            graph,
            output: Vec::new().into_iter(),
        }
    }
}

impl PathScan {
    fn describe_path(&self) -> String {
        let end = |t: PatternTerm| match t {
            PatternTerm::Constant(id) => format!("{id:?}"),
            PatternTerm::Variable(c) => self.variables[c].to_string(),
        };
        let path = self
            .path
            .as_ref()
            .map_or_else(|| "(evaluated)".to_owned(), |p| p.to_string());
        format!("{} {path} {}", end(self.subject), end(self.object))
    }
}

impl Operator for PathScan {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo::new("PathScan", self.describe_path())
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        super::save_materialized(self.path.is_none(), &mut self.output, None, stash)
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        if super::restore_materialized(state, &mut self.output, None, stash)? {
            self.path = None;
        }
        Ok(())
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        if let Some(path) = self.path.take() {
            let width = self.variables.len();
            let constant = |t: PatternTerm| match t {
                PatternTerm::Constant(id) => Some(id),
                PatternTerm::Variable(_) => None,
            };
            let graphs: Vec<(GraphScope, Option<(usize, Id)>)> = match self.graph {
                GraphScope::NamedVariable(column) => self
                    .ctx
                    .named_graph_ids()?
                    .into_iter()
                    .map(|g| (GraphScope::Named(g), Some((column, g))))
                    .collect(),
                scope => vec![(scope, None)],
            };
            let path = IdPath::resolve(&path, &self.ctx)?;
            let mut rows = Vec::new();
            for (graph, graph_binding) in graphs {
                let walker = Walker::new(&self.ctx, graph, &self.memory);
                for (s, o) in walker.pairs(&path, constant(self.subject), constant(self.object))? {
                    let mut row = vec![Id::UNDEFINED; width];
                    let mut ok = true;
                    for (term, value) in [(self.subject, s), (self.object, o)] {
                        if let PatternTerm::Variable(c) = term {
                            if row[c] != Id::UNDEFINED && row[c] != value {
                                ok = false;
                            }
                            row[c] = value;
                        }
                    }
                    if let Some((c, g)) = graph_binding {
                        if row[c] != Id::UNDEFINED && row[c] != g {
                            ok = false;
                        }
                        row[c] = g;
                    }
                    if ok {
                        rows.push(row);
                    }
                }
                self.memory.set(row_vec_bytes(rows.len(), width))?;
            }
            self.output = rows.into_iter();
        }
        Ok(super::next_chunk(&mut self.output, self.variables.len()))
    }
}
