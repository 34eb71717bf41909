//! A lone triple pattern whose object a FILTER reads whole (`REGEX(?title,
//! ...)`, `CONTAINS(LCASE(?name), ...)`, `STRLEN(?o) > 3`) is scanned in
//! the order of its object: consecutive rows then carry consecutive
//! vocabulary IDs, and each vocabulary block is decoded once for all its
//! terms. In subject order the objects come from all over the vocabulary,
//! and where it does not fit the vocabulary cache (titles at 100M triples)
//! every row decodes a block of its own. Without ORDER BY the order of
//! the rows is free, and a lone pattern joins nothing whose order it could
//! have served.

use crate::expr::whole_read_variables;
use oxrdf::Variable;
use spargebra::algebra::Expression;
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};
use tern_index::ScanRange;

/// Asks for `pattern` in object order (a whole range of its object, see
/// `Planner::narrowed`) when `filter` decodes its object and nothing else
/// narrows that object already.
pub fn order_by_decoded_object(
    filter: &Expression,
    pattern: &TriplePattern,
    ranges: &mut Vec<(Variable, ScanRange)>,
) {
    let Some(object) = orderable_object(pattern) else {
        return;
    };
    if ranges.iter().any(|(v, _)| v == object) {
        return;
    }
    if whole_read_variables(filter).contains(object) {
        ranges.push(object_order(object));
    }
}

/// The pattern's object variable, when a scan can be asked for in its order:
/// it is a variable that neither the subject nor the predicate repeats.
pub fn orderable_object(pattern: &TriplePattern) -> Option<&Variable> {
    let TermPattern::Variable(object) = &pattern.object else {
        return None;
    };
    let elsewhere = matches!(&pattern.subject, TermPattern::Variable(v) if v == object)
        || matches!(&pattern.predicate, NamedNodePattern::Variable(v) if v == object);
    (!elsewhere).then_some(object)
}

/// What asks a scan for `object`'s order (see `Planner::narrowed`): the
/// whole range of its values.
pub fn object_order(object: &Variable) -> (Variable, ScanRange) {
    (object.clone(), ScanRange::ALL)
}

#[cfg(test)]
mod tests {
    use super::*;
    use spargebra::algebra::GraphPattern;
    use spargebra::{Query, SparqlParser};

    /// The ranges asked for the lone pattern of `query`'s filter.
    fn asked(query: &str) -> Vec<(String, ScanRange)> {
        let Query::Select { pattern, .. } = SparqlParser::new().parse_query(query).unwrap() else {
            unreachable!()
        };
        let GraphPattern::Project { inner, .. } = pattern else {
            unreachable!()
        };
        let GraphPattern::Filter { expr, inner } = *inner else {
            unreachable!()
        };
        let GraphPattern::Bgp { patterns } = *inner else {
            unreachable!()
        };
        let mut ranges = Vec::new();
        order_by_decoded_object(&expr, &patterns[0], &mut ranges);
        ranges
            .into_iter()
            .map(|(v, r)| (v.as_str().to_owned(), r))
            .collect()
    }

    #[test]
    fn a_decoded_object_orders_its_scan() {
        let regex = "SELECT * WHERE { ?d <http://p> ?t FILTER(REGEX(?t, \"x|y\", \"i\")) }";
        assert_eq!(asked(regex), [("t".to_owned(), ScanRange::ALL)]);
        // Read only for its kind, or not the object, or also the subject.
        assert!(asked("SELECT * WHERE { ?s ?p ?o FILTER(LANG(?o) = \"de\") }").is_empty());
        assert!(
            asked("SELECT * WHERE { ?s <http://p> ?o FILTER(REGEX(STR(?s), \"x\")) }").is_empty()
        );
        assert!(asked("SELECT * WHERE { ?o <http://p> ?o FILTER(REGEX(?o, \"x\")) }").is_empty());
    }
}
