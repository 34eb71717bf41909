//! Queries parsed lately, by text and base IRI. A suspended query is parsed
//! again on every page it resumes for, and endpoints see the same query text
//! again and again; parsing a long query takes longer than resuming its plan.

use super::guard;
use crate::EngineError;
use spargebra::{Query, SparqlParser};
use std::sync::Arc;
use tern_index::memo::Memo;

/// Queries remembered at most.
const ENTRIES: usize = 256;
/// Longer query texts are parsed every time rather than kept.
const LONGEST_KEPT: usize = 16 * 1024;

pub struct ParsedQueries {
    queries: Memo<(Option<String>, String), Arc<Query>>,
    prefixes: Vec<(String, String)>,
}

impl Default for ParsedQueries {
    fn default() -> ParsedQueries {
        ParsedQueries::new(Vec::new())
    }
}

impl ParsedQueries {
    /// With `prefixes` predeclared (see [`EngineOptions::prefixes`](super::EngineOptions)).
    pub fn new(prefixes: Vec<(String, String)>) -> ParsedQueries {
        ParsedQueries {
            queries: Memo::new(ENTRIES),
            prefixes,
        }
    }

    pub fn prefixes(&self) -> &[(String, String)] {
        &self.prefixes
    }

    /// The parsed query, from the memo or parsed now. Shared, not copied:
    /// copying the syntax tree of a query costs as much as planning it.
    pub fn parse(&self, text: &str, base_iri: Option<&str>) -> Result<Arc<Query>, EngineError> {
        let prefixes = &self.prefixes;
        if text.len() > LONGEST_KEPT {
            return parse(text, base_iri, prefixes).map(Arc::new);
        }
        let key = (base_iri.map(str::to_owned), text.to_owned());
        self.queries
            .get_or_try(key, || parse(text, base_iri, prefixes).map(Arc::new))
    }
}

fn parse(
    text: &str,
    base_iri: Option<&str>,
    prefixes: &[(String, String)],
) -> Result<Query, EngineError> {
    let query = parser(text, base_iri, prefixes)?
        .parse_query(text)
        .map_err(|e| {
            // An update sent as a query fails with "expected CONSTRUCT …": say
            // what it is and where it goes instead.
            let is_update =
                parser(text, base_iri, prefixes).is_ok_and(|p| p.parse_update(text).is_ok());
            EngineError::Parse(if is_update {
                "this is a SPARQL update, not a query: send it as `update=` (form) or with \
             Content-Type: application/sparql-update, to a server started with \
             --update-token"
                    .to_owned()
            } else {
                super::syntax_error::in_words(&e.to_string(), text)
            })
        })?;
    let mut query = guard::check_algebra(query)?;
    super::select_star::in_query_order(text, &mut query);
    Ok(query)
}

/// A parser for `text` (checked against the limits on text first) that
/// resolves relative IRIs against `base_iri` and knows `prefixes`.
pub(crate) fn parser(
    text: &str,
    base_iri: Option<&str>,
    prefixes: &[(String, String)],
) -> Result<SparqlParser, EngineError> {
    guard::check_text(text)?;
    let parser = prefixes
        .iter()
        .try_fold(SparqlParser::new(), |parser, (name, iri)| {
            parser.with_prefix(name, iri)
        })
        .map_err(|e| EngineError::Parse(format!("a predeclared prefix: {e}")))?;
    match base_iri {
        Some(base) => parser
            .with_base_iri(base)
            .map_err(|e| EngineError::Parse(e.to_string())),
        None => Ok(parser),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembered_queries_equal_fresh_parses_and_errors_are_not_kept() {
        let memo = ParsedQueries::default();
        let text = "SELECT ?s WHERE { ?s <p> ?o }";
        let base = Some("http://example.org/");
        let first = memo.parse(text, base).unwrap();
        assert_eq!(memo.parse(text, base).unwrap(), first);
        let fresh = SparqlParser::new()
            .with_base_iri("http://example.org/")
            .unwrap()
            .parse_query(text)
            .unwrap();
        assert_eq!(*first, fresh);
        // The base IRI is part of the key: <p> resolves differently.
        let other = memo.parse(text, Some("http://other.org/")).unwrap();
        assert_ne!(other, first);
        assert!(memo.parse("SELECT WHERE", None).is_err());
        assert!(memo.parse("SELECT WHERE", None).is_err());
    }

    #[test]
    fn an_update_sent_as_a_query_is_told_where_to_go() {
        let Err(EngineError::Parse(message)) =
            parse("PREFIX e: <http://e/> INSERT DATA { e:s e:p 1 }", None, &[])
        else {
            panic!("an update is not a query")
        };
        assert!(message.contains("application/sparql-update"), "{message}");
        let Err(EngineError::Parse(message)) = parse("SELECT WHERE", None, &[]) else {
            panic!("not a query")
        };
        assert!(!message.contains("update"), "{message}");
    }
}
