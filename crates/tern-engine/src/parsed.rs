//! Queries parsed lately, by text and base IRI. A suspended query is parsed
//! again on every page it resumes for, and endpoints see the same query text
//! again and again; parsing a long query takes longer than resuming its plan.

use crate::EngineError;
use spargebra::{Query, SparqlParser};
use std::collections::HashMap;
use std::sync::Mutex;

/// Queries remembered at most; the memo starts over when full.
const ENTRIES: usize = 256;
/// Longer query texts are parsed every time rather than kept.
const LONGEST_KEPT: usize = 16 * 1024;

#[derive(Default)]
pub struct ParsedQueries {
    queries: Mutex<HashMap<(Option<String>, String), Query>>,
}

impl ParsedQueries {
    /// The parsed query, from the memo or parsed now.
    pub fn parse(&self, text: &str, base_iri: Option<&str>) -> Result<Query, EngineError> {
        if text.len() > LONGEST_KEPT {
            return parse(text, base_iri);
        }
        let key = (base_iri.map(str::to_owned), text.to_owned());
        if let Some(query) = self.queries.lock().unwrap().get(&key) {
            return Ok(query.clone());
        }
        let query = parse(text, base_iri)?;
        let mut queries = self.queries.lock().unwrap();
        if queries.len() >= ENTRIES {
            queries.clear();
        }
        queries.insert(key, query.clone());
        Ok(query)
    }
}

fn parse(text: &str, base_iri: Option<&str>) -> Result<Query, EngineError> {
    let mut parser = SparqlParser::new();
    if let Some(base) = base_iri {
        parser = parser
            .with_base_iri(base)
            .map_err(|e| EngineError::Parse(e.to_string()))?;
    }
    parser
        .parse_query(text)
        .map_err(|e| EngineError::Parse(e.to_string()))
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
        assert_eq!(first, fresh);
        // The base IRI is part of the key: <p> resolves differently.
        let other = memo.parse(text, Some("http://other.org/")).unwrap();
        assert_ne!(other, first);
        assert!(memo.parse("SELECT WHERE", None).is_err());
        assert!(memo.parse("SELECT WHERE", None).is_err());
    }
}
