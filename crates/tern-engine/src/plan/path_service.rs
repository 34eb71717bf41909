//! Shortest paths asked for as `SERVICE <urn:tern:path> { … }`: the block's
//! triples configure one [`ShortestPath`] operator (inputs are constants or
//! variables bound by the patterns joined with the block; outputs are
//! variables). Any SPARQL parser reads the block; only Tern runs it. The
//! settings are documented in `docs/paths.md`.

use super::planner::{GraphContext, Planner};
use crate::exec::{
    BoxedOperator, EdgeKind, Endpoint, PathCount, PathDirection, PathOutputs, PathSpec,
    ShortestPath, Values,
};
use crate::exec::{GraphScope, Measured};
use crate::EngineError;
use oxrdf::{Term, Variable};
use spargebra::algebra::GraphPattern;
use spargebra::term::{NamedNodePattern, TermPattern};
use std::sync::Arc;

/// The SERVICE IRI that asks for a path search.
pub const PATH_SERVICE: &str = "urn:tern:path";
/// The namespace of its settings (`path:source` with
/// `PREFIX path: <urn:tern:path:>`).
pub const PATH_NAMESPACE: &str = "urn:tern:path:";

/// Paths `paths "all"` returns at most, unless `maxPaths` says otherwise.
const DEFAULT_MAX_PATHS: usize = 1_000;

/// Whether a pattern is a path search block.
pub(super) fn is_path_service(pattern: &GraphPattern) -> bool {
    matches!(pattern, GraphPattern::Service { name: NamedNodePattern::NamedNode(n), .. } if n.as_str() == PATH_SERVICE)
}

/// One setting's values as written.
#[derive(Default)]
struct Settings {
    values: Vec<(String, TermPattern)>,
}

impl Settings {
    fn all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a TermPattern> {
        self.values
            .iter()
            .filter(move |(k, _)| k == key)
            .map(|(_, v)| v)
    }

    fn one<'a>(&'a self, key: &'a str) -> Result<Option<&'a TermPattern>, EngineError> {
        let mut values = self.all(key);
        let first = values.next();
        if values.next().is_some() {
            return Err(bad(format!("path:{key} is given more than once")));
        }
        Ok(first)
    }

    fn output(&self, key: &str) -> Result<Option<Variable>, EngineError> {
        match self.one(key)? {
            None => Ok(None),
            Some(TermPattern::Variable(v)) => Ok(Some(v.clone())),
            Some(other) => Err(bad(format!(
                "path:{key} names an output: it takes a variable, not {other}"
            ))),
        }
    }

    fn number(&self, key: &str) -> Result<Option<f64>, EngineError> {
        match self.one(key)? {
            None => Ok(None),
            Some(TermPattern::Literal(l)) => l
                .value()
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| bad(format!("path:{key} takes a number, not {l}"))),
            Some(other) => Err(bad(format!("path:{key} takes a number, not {other}"))),
        }
    }
}

fn bad(message: String) -> EngineError {
    EngineError::Parse(format!("SERVICE <{PATH_SERVICE}>: {message}"))
}

const INPUTS: &[&str] = &[
    "source",
    "target",
    "predicate",
    "direction",
    "maxLength",
    "maxCost",
    "paths",
    "maxPaths",
    "edgeFrom",
    "edgeTo",
    "weight",
];
const OUTPUTS: &[&str] = &[
    "start",
    "end",
    "length",
    "cost",
    "pathIndex",
    "step",
    "node",
    "via",
];

impl Planner {
    /// The path search of `service`, for each row of `input` when given
    /// (which binds its variable sources and targets).
    pub(super) fn plan_path_service(
        &self,
        service: &GraphPattern,
        input: Option<BoxedOperator>,
        graph: &GraphContext,
    ) -> Result<BoxedOperator, EngineError> {
        let GraphPattern::Service { inner, .. } = service else {
            return Err(bad("not a SERVICE".into()));
        };
        let GraphPattern::Bgp { patterns } = inner.as_ref() else {
            return Err(bad(
                "the block holds only triples that configure the search".into(),
            ));
        };
        let mut settings = Settings::default();
        for t in patterns {
            let NamedNodePattern::NamedNode(p) = &t.predicate else {
                return Err(bad(format!("{t}: a setting's predicate is a path: IRI")));
            };
            let key = p.as_str().strip_prefix(PATH_NAMESPACE).unwrap_or("");
            if !INPUTS.contains(&key) && !OUTPUTS.contains(&key) {
                return Err(bad(format!(
                    "unknown setting {p}; the settings are path:{} (inputs) and path:{} \
                     (outputs), with PREFIX path: <{PATH_NAMESPACE}>",
                    INPUTS.join(", path:"),
                    OUTPUTS.join(", path:")
                )));
            }
            settings.values.push((key.to_owned(), t.object.clone()));
        }
        let scope = match graph {
            GraphContext::Default => GraphScope::Default,
            GraphContext::Named(id) => GraphScope::Named(*id),
            GraphContext::Variable(_) => {
                return Err(EngineError::Unsupported(
                    "a path search inside GRAPH ?g (name the graph)".into(),
                ))
            }
        };
        let input_variables: Vec<Variable> = input
            .as_ref()
            .map(|i| i.variables().to_vec())
            .unwrap_or_default();
        let mut variables = input_variables.clone();
        let mut outputs = PathOutputs::default();
        for key in OUTPUTS {
            let Some(v) = settings.output(key)? else {
                continue;
            };
            if variables.contains(&v) {
                return Err(bad(format!(
                    "the output {v} of path:{key} is bound already (each output needs a new variable)"
                )));
            }
            variables.push(v);
            let column = Some(variables.len() - 1);
            match *key {
                "start" => outputs.start = column,
                "end" => outputs.end = column,
                "length" => outputs.length = column,
                "cost" => outputs.cost = column,
                "pathIndex" => outputs.path_index = column,
                "step" => outputs.step = column,
                "node" => outputs.node = column,
                _ => outputs.via = column,
            }
        }
        let sources = match self.endpoint(&settings, "source", &input_variables)? {
            Some(Some(e)) => e,
            Some(None) => return Ok(Box::new(Values::empty(variables))),
            None => return Err(bad("path:source is missing".into())),
        };
        let targets = match self.endpoint(&settings, "target", &input_variables)? {
            Some(Some(e)) => Some(e),
            Some(None) => return Ok(Box::new(Values::empty(variables))),
            None => None,
        };
        let edges = self.edge_kind(&settings)?;
        let direction = match settings.one("direction")? {
            None => PathDirection::Forward,
            Some(TermPattern::Literal(l)) => match l.value() {
                "forward" => PathDirection::Forward,
                "backward" => PathDirection::Backward,
                "both" => PathDirection::Both,
                other => {
                    return Err(bad(format!(
                        "path:direction is \"forward\", \"backward\" or \"both\", not \"{other}\""
                    )))
                }
            },
            Some(other) => return Err(bad(format!("path:direction takes a string, not {other}"))),
        };
        let count = |key: &str| -> Result<Option<usize>, EngineError> {
            settings
                .number(key)?
                .map(|n| {
                    (n >= 0.0 && n.fract() == 0.0 && n <= 1e9)
                        .then_some(n as usize)
                        .ok_or_else(|| bad(format!("path:{key} takes a whole number, not {n}")))
                })
                .transpose()
        };
        let max_paths = count("maxPaths")?.unwrap_or(DEFAULT_MAX_PATHS).max(1);
        let paths = match settings.one("paths")? {
            None => PathCount::One,
            Some(TermPattern::Literal(l)) if l.value() == "all" => {
                if matches!(edges, EdgeKind::Weighted { .. }) {
                    return Err(bad(
                        "paths \"all\" is for unweighted searches; ask for k paths (path:paths 5)"
                            .into(),
                    ));
                }
                PathCount::AllShortest(max_paths)
            }
            Some(_) => match count("paths")? {
                Some(0) => return Err(bad("path:paths is 1 or more".into())),
                Some(1) => PathCount::One,
                Some(k) => PathCount::Shortest(k.min(max_paths)),
                None => PathCount::One,
            },
        };
        if targets.is_none() && paths != PathCount::One {
            return Err(bad("several paths need a path:target".into()));
        }
        let spec = PathSpec {
            sources,
            targets,
            edges,
            direction,
            max_hops: count("maxLength")?,
            max_cost: settings.number("maxCost")?,
            paths,
            outputs,
            graph: scope,
        };
        let operator = ShortestPath::new(self.ctx.clone(), input, spec, variables);
        Ok(Box::new(Measured::new(Box::new(operator), None)))
    }

    /// A source or target setting: `None` when absent, `Some(None)` when
    /// none of its constants is in the data (no path), else where its
    /// values come from.
    fn endpoint(
        &self,
        settings: &Settings,
        key: &str,
        input: &[Variable],
    ) -> Result<Option<Option<Endpoint>>, EngineError> {
        let values: Vec<&TermPattern> = settings.all(key).collect();
        if values.is_empty() {
            return Ok(None);
        }
        if let [TermPattern::Variable(v)] = values.as_slice() {
            if let Some(id) = self.bound_value(v) {
                return Ok(Some(Some(Endpoint::Constants(vec![id]))));
            }
            return match input.iter().position(|x| x == v) {
                Some(column) => Ok(Some(Some(Endpoint::Column(column)))),
                None => Err(bad(format!(
                    "path:{key} {v} is not bound: write the patterns that bind it before the \
                     SERVICE block, in the same group"
                ))),
            };
        }
        let mut ids = Vec::new();
        for value in values {
            let term: Term = match value {
                TermPattern::NamedNode(n) => n.clone().into(),
                TermPattern::Literal(l) => l.clone().into(),
                other => {
                    return Err(bad(format!(
                        "path:{key} takes IRIs (one or more) or one variable, not {other}"
                    )))
                }
            };
            if let Some(id) = self.ctx.lookup(&term)? {
                ids.push(id);
            }
        }
        Ok(Some((!ids.is_empty()).then_some(Endpoint::Constants(ids))))
    }

    fn edge_kind(&self, settings: &Settings) -> Result<EdgeKind, EngineError> {
        let iri = |key: &str| -> Result<Option<Option<tern_index::Id>>, EngineError> {
            match settings.one(key)? {
                None => Ok(None),
                Some(TermPattern::NamedNode(n)) => Ok(Some(self.ctx.lookup(&n.clone().into())?)),
                Some(other) => Err(bad(format!("path:{key} takes an IRI, not {other}"))),
            }
        };
        let weighted = [iri("edgeFrom")?, iri("edgeTo")?, iri("weight")?];
        match weighted {
            [None, None, None] => {}
            [Some(from), Some(to), Some(weight)] => {
                if settings.all("predicate").next().is_some() {
                    return Err(bad(
                        "path:predicate is for edges that are triples; weighted edges are nodes \
                         (path:edgeFrom, path:edgeTo, path:weight)"
                            .into(),
                    ));
                }
                // An IRI the data does not hold: no edge has it.
                return Ok(match (from, to, weight) {
                    (Some(from), Some(to), Some(weight)) => EdgeKind::Weighted { from, to, weight },
                    _ => EdgeKind::Predicates(Arc::from([])),
                });
            }
            _ => {
                return Err(bad(
                    "weighted edges need all three of path:edgeFrom, path:edgeTo and path:weight"
                        .into(),
                ))
            }
        }
        let mut predicates = Vec::new();
        let mut any = true;
        for value in settings.all("predicate") {
            any = false;
            let TermPattern::NamedNode(p) = value else {
                return Err(bad(format!("path:predicate takes IRIs, not {value}")));
            };
            predicates.extend(self.ctx.lookup(&p.clone().into())?);
        }
        Ok(if any {
            EdgeKind::AnyPredicate
        } else {
            EdgeKind::Predicates(predicates.into())
        })
    }
}
