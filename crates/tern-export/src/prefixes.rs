//! Prefixes for compact Turtle and RDF/XML: those declared in the query,
//! then well-known ones, looked up by namespace.

use rustc_hash::FxHashMap;

/// Prefixes every user knows; also what `tern serve` predeclares for queries.
pub const WELL_KNOWN: &[(&str, &str)] = &[
    ("rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#"),
    ("rdfs", "http://www.w3.org/2000/01/rdf-schema#"),
    ("xsd", "http://www.w3.org/2001/XMLSchema#"),
    ("owl", "http://www.w3.org/2002/07/owl#"),
    ("skos", "http://www.w3.org/2004/02/skos/core#"),
    ("foaf", "http://xmlns.com/foaf/0.1/"),
    ("dc", "http://purl.org/dc/elements/1.1/"),
    ("dcterms", "http://purl.org/dc/terms/"),
    ("schema", "http://schema.org/"),
    ("sd", "http://www.w3.org/ns/sparql-service-description#"),
    ("void", "http://rdfs.org/ns/void#"),
    ("prov", "http://www.w3.org/ns/prov#"),
    ("wd", "http://www.wikidata.org/entity/"),
    ("wdt", "http://www.wikidata.org/prop/direct/"),
];

#[derive(Debug, Clone, Default)]
pub struct Prefixes {
    /// (prefix, namespace) in declaration order.
    entries: Vec<(String, String)>,
    by_namespace: FxHashMap<String, usize>,
}

impl Prefixes {
    pub fn well_known() -> Prefixes {
        let mut prefixes = Prefixes::default();
        for (p, ns) in WELL_KNOWN {
            prefixes.add(p, ns);
        }
        prefixes
    }

    /// The query's own `PREFIX` declarations first (they win over well-known
    /// ones with the same name or namespace), then the well-known ones.
    pub fn for_query(query: &str) -> Prefixes {
        let mut prefixes = Prefixes::default();
        for (p, ns) in query_prefixes(query) {
            prefixes.add(&p, &ns);
        }
        for (p, ns) in WELL_KNOWN {
            prefixes.add(p, ns);
        }
        prefixes
    }

    /// Adds a prefix unless its name or namespace is already taken.
    pub fn add(&mut self, prefix: &str, namespace: &str) {
        if self.by_namespace.contains_key(namespace)
            || self.entries.iter().any(|(p, _)| p == prefix)
        {
            return;
        }
        self.by_namespace
            .insert(namespace.to_owned(), self.entries.len());
        self.entries.push((prefix.to_owned(), namespace.to_owned()));
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(p, ns)| (p.as_str(), ns.as_str()))
    }

    /// `iri` as (prefix, local name) when its namespace (everything up to the
    /// last `/` or `#`) is known and the rest is a safe Turtle local name.
    pub fn shorten<'a>(&self, iri: &'a str) -> Option<(&str, &'a str)> {
        let cut = iri.rfind(['/', '#'])? + 1;
        let (namespace, local) = iri.split_at(cut);
        let index = *self.by_namespace.get(namespace)?;
        is_turtle_local(local).then(|| (self.entries[index].0.as_str(), local))
    }
}

/// A conservative subset of Turtle's PN_LOCAL: ASCII letters, digits, `_`,
/// `-` and inner `.`; anything else is written as a full IRI.
fn is_turtle_local(local: &str) -> bool {
    let bytes = local.as_bytes();
    match (bytes.first(), bytes.last()) {
        (None, _) => true,
        (Some(first), Some(last)) => {
            (first.is_ascii_alphanumeric() || *first == b'_')
                && *last != b'.'
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        }
        _ => false,
    }
}

/// `PREFIX p: <ns>` declarations of a query's prologue, found by a small
/// scanner (the parsed algebra does not keep them). Relative namespaces are
/// skipped since they would need the query's base.
pub fn query_prefixes(query: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let lower = query.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = lower[from..].find("prefix") {
        let start = from + at;
        from = start + 6;
        if start > 0 && lower.as_bytes()[start - 1].is_ascii_alphanumeric() {
            continue;
        }
        let rest = query[from..].trim_start();
        let Some(colon) = rest.find(':') else {
            continue;
        };
        let name = &rest[..colon];
        if !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        {
            continue;
        }
        let after = rest[colon + 1..].trim_start();
        let Some(iri) = after.strip_prefix('<').and_then(|a| a.split_once('>')) else {
            continue;
        };
        if iri.0.contains(':') {
            found.push((name.to_owned(), iri.0.to_owned()));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_prefixes_come_first() {
        let p = Prefixes::for_query(
            "PREFIX ex: <http://e/ns#>\nprefix rdf:<http://other/> SELECT * WHERE { ?s ?p ?o }",
        );
        assert_eq!(p.shorten("http://e/ns#a"), Some(("ex", "a")));
        assert_eq!(p.shorten("http://other/x"), Some(("rdf", "x")));
        // The well-known rdf prefix lost its name to the query's.
        assert_eq!(
            p.shorten("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"),
            None
        );
        assert_eq!(p.shorten("http://e/ns#a b"), None);
        assert_eq!(p.shorten("http://e/ns#a."), None);
    }
}
