//! The engine's front door.

use crate::context::{GraphSet, QueryContext};
use crate::exec::BoxedOperator;
use crate::plan::{GraphContext, Planner};
use crate::{construct, describe, EngineError, QueryOutcome, SolutionRow};
use spargebra::algebra::QueryDataset;
use spargebra::{Query, SparqlParser};
use std::sync::Arc;
use std::time::Duration;
use tern_index::{Id, Index};

#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// When true (the default), the default graph of a query without FROM is the
    /// union of all graphs; when false it is only the index's default graph (as
    /// the W3C tests expect).
    pub default_graph_is_union: bool,
    /// Stop the query with [`EngineError::Timeout`] after this long.
    pub timeout: Option<Duration>,
    /// Stop the query with [`EngineError::MemoryBudget`] beyond this many bytes
    /// of materialized state.
    pub memory_budget: Option<u64>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            default_graph_is_union: true,
            timeout: None,
            memory_budget: None,
        }
    }
}

/// Runs SPARQL queries against one index. Cheap to clone.
#[derive(Clone)]
pub struct Engine {
    index: Arc<Index>,
    options: EngineOptions,
}

impl Engine {
    pub fn new(index: Arc<Index>, options: EngineOptions) -> Engine {
        Engine { index, options }
    }

    pub fn index(&self) -> &Arc<Index> {
        &self.index
    }

    /// Parses, plans and starts a query. `base_iri` resolves relative IRIs.
    pub fn query(&self, query: &str, base_iri: Option<&str>) -> Result<QueryOutcome, EngineError> {
        let mut parser = SparqlParser::new();
        if let Some(base) = base_iri {
            parser = parser
                .with_base_iri(base)
                .map_err(|e| EngineError::Parse(e.to_string()))?;
        }
        let query = parser
            .parse_query(query)
            .map_err(|e| EngineError::Parse(e.to_string()))?;
        match query {
            Query::Select {
                dataset,
                pattern,
                base_iri,
            } => {
                let (ctx, root) = self.start(dataset.as_ref(), base_iri, &pattern)?;
                let rows = Rows::new(ctx, root);
                Ok(QueryOutcome::Solutions {
                    variables: rows.variables(),
                    rows: Box::new(rows),
                })
            }
            Query::Ask {
                dataset,
                pattern,
                base_iri,
            } => {
                let (_, mut root) = self.start(dataset.as_ref(), base_iri, &pattern)?;
                Ok(QueryOutcome::Boolean(root.next_batch()?.is_some()))
            }
            Query::Construct {
                template,
                dataset,
                pattern,
                base_iri,
            } => {
                let (ctx, root) = self.start(dataset.as_ref(), base_iri, &pattern)?;
                Ok(QueryOutcome::Graph(Box::new(construct::Construct::new(
                    Rows::new(ctx, root),
                    template,
                ))))
            }
            Query::Describe {
                dataset,
                pattern,
                base_iri,
            } => {
                let (ctx, root) = self.start(dataset.as_ref(), base_iri, &pattern)?;
                let triples = describe::describe(&ctx, Rows::new(ctx.clone(), root))?;
                Ok(QueryOutcome::Graph(Box::new(triples.into_iter().map(Ok))))
            }
        }
    }

    /// The query's context and its planned operator tree.
    fn start(
        &self,
        dataset: Option<&QueryDataset>,
        base_iri: Option<oxiri::Iri<String>>,
        pattern: &spargebra::algebra::GraphPattern,
    ) -> Result<(Arc<QueryContext>, BoxedOperator), EngineError> {
        let ctx = self.context(dataset, base_iri)?;
        let root = Planner::new(ctx.clone()).plan(pattern, &GraphContext::Default)?;
        Ok((ctx, root))
    }

    fn context(
        &self,
        dataset: Option<&QueryDataset>,
        base_iri: Option<oxiri::Iri<String>>,
    ) -> Result<Arc<QueryContext>, EngineError> {
        let (default_graph, named_graphs) = match dataset {
            None => (
                if self.options.default_graph_is_union {
                    GraphSet::All
                } else {
                    GraphSet::IndexDefault
                },
                GraphSet::AllNamed,
            ),
            Some(dataset) => {
                let ids = |graphs: &[oxrdf::NamedNode]| -> Result<Vec<Id>, EngineError> {
                    let mut ids = Vec::new();
                    for g in graphs {
                        if let Some(id) = self.index.id_of(g.as_ref().into())? {
                            ids.push(id);
                        }
                    }
                    Ok(ids)
                };
                (
                    GraphSet::Only(ids(&dataset.default)?),
                    GraphSet::Only(ids(dataset.named.as_deref().unwrap_or_default())?),
                )
            }
        };
        Ok(Arc::new(QueryContext::new(
            self.index.clone(),
            default_graph,
            named_graphs,
            self.options.timeout,
            self.options.memory_budget,
            base_iri,
        )))
    }
}

/// Solutions as terms, decoded a batch at a time.
pub(crate) struct Rows {
    ctx: Arc<QueryContext>,
    root: BoxedOperator,
    /// Output columns of the root that are shown (internal blank-node
    /// variables are not).
    shown: Vec<usize>,
    buffer: std::collections::VecDeque<SolutionRow>,
    done: bool,
}

impl Rows {
    fn new(ctx: Arc<QueryContext>, root: BoxedOperator) -> Rows {
        let shown = root
            .variables()
            .iter()
            .enumerate()
            .filter(|(_, v)| !crate::plan::is_blank_variable(v))
            .map(|(i, _)| i)
            .collect();
        Rows {
            ctx,
            root,
            shown,
            buffer: Default::default(),
            done: false,
        }
    }

    pub(crate) fn variables(&self) -> Vec<oxrdf::Variable> {
        self.shown
            .iter()
            .map(|&i| self.root.variables()[i].clone())
            .collect()
    }

    fn fill(&mut self) -> Result<(), EngineError> {
        while self.buffer.is_empty() && !self.done {
            match self.root.next_batch()? {
                None => self.done = true,
                Some(batch) => {
                    let columns: Vec<Vec<Option<oxrdf::Term>>> = self
                        .shown
                        .iter()
                        .map(|&c| self.ctx.terms(&batch.columns[c]))
                        .collect::<Result<_, _>>()?;
                    for i in 0..batch.len {
                        self.buffer
                            .push_back(columns.iter().map(|c| c[i].clone()).collect());
                    }
                }
            }
        }
        Ok(())
    }
}

impl Iterator for Rows {
    type Item = Result<SolutionRow, EngineError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Err(e) = self.fill() {
            self.done = true;
            self.buffer.clear();
            return Some(Err(e));
        }
        self.buffer.pop_front().map(Ok)
    }
}
