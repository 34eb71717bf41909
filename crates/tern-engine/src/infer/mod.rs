//! Inference at query time: nothing derived is stored. The schema of a
//! snapshot (class and property hierarchies, domains and ranges, inverse,
//! symmetric and transitive properties, class definitions, `owl:sameAs`
//! classes) is compiled once into closures ([`schema`]), and each triple
//! pattern of a query that the schema can entail more answers for is
//! rewritten, before planning, into the patterns over stored triples that
//! derive them ([`rewrite`]). The planner plans each rewritten pattern as
//! one leaf of its group's join order (`plan::union_leaf`): looked up per
//! row of a selective rest, or read whole.
//!
//! A rewritten pattern keeps SPARQL's meaning over the entailed graph: the
//! entailed graph is a set, so each rewritten pattern gives each solution
//! once (its alternatives are unioned under DISTINCT), and the rest of the
//! query (joins, OPTIONAL, aggregates) sees it as one pattern.
//!
//! The regimes and their rules are listed rule by rule in
//! `docs/inference.md`. A query chooses its regime by the request
//! ([`QueryRequest::inference`](crate::QueryRequest)), by the server's
//! default, or in its own text with `FROM <urn:tern:inference:MODE>` (see
//! [`take_markers`]).

mod node_facts;
mod rewrite;
mod schema;
mod vocabulary;

pub use node_facts::NodeFacts;
pub use rewrite::rewrite;
pub use schema::SchemaCache;

use std::fmt;
use std::str::FromStr;

/// Which entailment a query's patterns are matched under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Inference {
    /// Stored triples only (SPARQL's simple entailment).
    #[default]
    None,
    /// RDFS: subclasses, subproperties, domains and ranges.
    Rdfs,
    /// RDFS and the OWL 2 RL rules Tern supports: equivalent classes and
    /// properties, inverse, symmetric and transitive properties,
    /// intersections, `someValuesFrom` and `hasValue` restrictions, sameAs.
    OwlRl,
}

impl Inference {
    pub fn name(self) -> &'static str {
        match self {
            Inference::None => "none",
            Inference::Rdfs => "rdfs",
            Inference::OwlRl => "owl-rl",
        }
    }
}

impl fmt::Display for Inference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Inference {
    type Err = String;

    fn from_str(s: &str) -> Result<Inference, String> {
        match s.to_ascii_lowercase().as_str() {
            "none" | "off" => Ok(Inference::None),
            "rdfs" => Ok(Inference::Rdfs),
            "owl-rl" | "owlrl" | "owl" => Ok(Inference::OwlRl),
            other => Err(format!(
                "unknown inference mode '{other}': use none, rdfs or owl-rl"
            )),
        }
    }
}

/// How answers that `owl:sameAs` makes interchangeable are reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SameAsAnswers {
    /// Every synonym, as the OWL RL rules entail them (a resource with three
    /// names is three answers).
    #[default]
    AllSynonyms,
    /// One member of each sameAs class stands for all of them (the least
    /// one in term order), so each resource is one answer.
    Canonical,
}

impl SameAsAnswers {
    pub fn name(self) -> &'static str {
        match self {
            SameAsAnswers::AllSynonyms => "all",
            SameAsAnswers::Canonical => "canonical",
        }
    }
}

impl FromStr for SameAsAnswers {
    type Err = String;

    fn from_str(s: &str) -> Result<SameAsAnswers, String> {
        match s.to_ascii_lowercase().as_str() {
            "all" => Ok(SameAsAnswers::AllSynonyms),
            "canonical" => Ok(SameAsAnswers::Canonical),
            other => Err(format!(
                "unknown sameAs answers '{other}': use all or canonical"
            )),
        }
    }
}

/// Everything that decides how one query is rewritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct InferenceMode {
    pub regime: Inference,
    pub same_as: SameAsAnswers,
}

/// The IRI namespace of the query-text markers.
pub const MARKER_NAMESPACE: &str = "urn:tern:";

/// Takes Tern's markers out of a query's `FROM` list: `FROM
/// <urn:tern:inference:rdfs>` (or `none`, `owl-rl`) picks the regime and
/// `FROM <urn:tern:sameas:canonical>` (or `all`) how synonyms are
/// reported. A marker is not a graph: it is removed, and a query whose
/// only FROM clauses were markers reads the default dataset. Returns the
/// settings found; an unknown `urn:tern:` IRI is an error rather than an
/// empty graph, since it is most likely a typo in a marker.
pub fn take_markers(
    graphs: &mut Vec<oxrdf::NamedNode>,
) -> Result<(Option<Inference>, Option<SameAsAnswers>), String> {
    let mut regime = None;
    let mut same_as = None;
    let mut error = None;
    graphs.retain(|g| {
        let Some(rest) = g.as_str().strip_prefix(MARKER_NAMESPACE) else {
            return true;
        };
        if let Some(mode) = rest.strip_prefix("inference:") {
            match mode.parse() {
                Ok(m) => regime = Some(m),
                Err(e) => error = Some(e),
            }
        } else if let Some(mode) = rest.strip_prefix("sameas:") {
            match mode.parse() {
                Ok(m) => same_as = Some(m),
                Err(e) => error = Some(e),
            }
        } else {
            error = Some(format!(
                "unknown marker <{g}>: Tern's markers are <urn:tern:inference:none|rdfs|owl-rl> \
                 and <urn:tern:sameas:all|canonical>",
                g = g.as_str()
            ));
        }
        false
    });
    match error {
        Some(e) => Err(e),
        None => Ok((regime, same_as)),
    }
}
