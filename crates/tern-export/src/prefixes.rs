//! Prefixes for compact Turtle, RDF/XML and a JSON-LD context: those
//! declared in the query, then well-known ones, then the namespaces the
//! data uses most (named here), looked up by namespace.

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

    /// Adds `namespaces` (the data's most used, see
    /// `tern_index::Index::frequent_namespaces`) under names made from
    /// their IRIs, after those already declared: `http://purl.org/stuff/rev#`
    /// becomes `rev:`, `.../bsbm/v01/vocabulary/` becomes `bsbm:`.
    pub fn add_namespaces(&mut self, namespaces: &[String]) {
        for namespace in namespaces {
            if self.by_namespace.contains_key(namespace.as_str()) {
                continue;
            }
            let taken = |name: &str| self.entries.iter().any(|(p, _)| p == name);
            let name = name_candidates(namespace)
                .into_iter()
                .find(|name| !taken(name))
                .unwrap_or_else(|| {
                    (1..)
                        .map(|n| format!("ns{n}"))
                        .find(|name| !taken(name))
                        .expect("some number is free")
                });
            self.add(&name, namespace);
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(p, ns)| (p.as_str(), ns.as_str()))
    }

    /// `iri` as (prefix, local name) when its namespace (everything up to the
    /// last `/` or `#`) is known and the rest is a safe Turtle local name.
    pub fn shorten<'a>(&self, iri: &'a str) -> Option<(&str, &'a str)> {
        let (namespace, local) = split_turtle_local(iri)?;
        let index = *self.by_namespace.get(namespace)?;
        Some((self.entries[index].0.as_str(), local))
    }

    /// As [`shorten`](Self::shorten), looking the namespace up in `memo`
    /// first: a writer's IRIs come from a few namespaces in turn, and
    /// comparing one costs less than hashing it.
    pub fn shorten_memo<'a>(
        &self,
        iri: &'a str,
        memo: &mut NamespaceMemo,
    ) -> Option<(&str, &'a str)> {
        let (namespace, local) = split_turtle_local(iri)?;
        let index = match memo.find(namespace) {
            Some(found) => found,
            None => {
                let found = self.by_namespace.get(namespace).copied();
                memo.remember(namespace, found);
                found
            }
        }?;
        Some((self.entries[index].0.as_str(), local))
    }
}

/// The namespaces a writer looked up last, with what they were found to
/// be (a prefix's index, or none): see [`Prefixes::shorten_memo`].
#[derive(Debug, Clone, Default)]
pub struct NamespaceMemo {
    slots: [(Vec<u8>, Option<usize>); MEMO_SLOTS],
    /// The slot the next namespace looked up takes.
    next: usize,
}

/// Namespaces remembered: a subject's, a predicate's, an object's and a
/// datatype's.
const MEMO_SLOTS: usize = 4;

impl NamespaceMemo {
    /// What `namespace` was found to be, if remembered.
    fn find(&self, namespace: &str) -> Option<Option<usize>> {
        self.slots
            .iter()
            .find(|(held, _)| held.as_slice() == namespace.as_bytes())
            .map(|&(_, found)| found)
    }

    fn remember(&mut self, namespace: &str, found: Option<usize>) {
        let (held, slot) = &mut self.slots[self.next];
        held.clear();
        held.extend_from_slice(namespace.as_bytes());
        *slot = found;
        self.next = (self.next + 1) % MEMO_SLOTS;
    }
}

/// Segments of a namespace that say nothing of whose it is.
const GENERIC_SEGMENTS: &[&str] = &[
    "ns",
    "vocabulary",
    "vocab",
    "ontology",
    "onto",
    "schema",
    "schemas",
    "resource",
    "resources",
    "instances",
    "instance",
    "entity",
    "entities",
    "prop",
    "property",
    "properties",
    "terms",
    "core",
    "elements",
    "def",
    "id",
    "data",
    "www",
];

/// Names for a namespace, best first: the last segment of its path that
/// says whose it is (not a version, not a word like `vocabulary`), then its
/// last segment. Each is lowercase ASCII letters, digits and `-`, starting
/// with a letter: a valid Turtle and XML prefix.
fn name_candidates(namespace: &str) -> Vec<String> {
    // The path's segments after the authority (a host says little: the
    // same host serves many vocabularies).
    let after_scheme = namespace
        .split_once("://")
        .map_or(namespace, |(_, rest)| rest);
    let path = after_scheme
        .split_once('/')
        .map_or("", |(_host, path)| path);
    let segments: Vec<String> = path
        .split(['/', '#'])
        .map(clean_name)
        .filter(|s| !s.is_empty())
        .collect();
    let is_version = |s: &str| {
        let digits = s.strip_prefix('v').unwrap_or(s);
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit() || b == b'-')
    };
    let mut names: Vec<String> = Vec::new();
    if let Some(meaningful) = segments
        .iter()
        .rev()
        .find(|s| !is_version(s) && !GENERIC_SEGMENTS.contains(&s.as_str()))
    {
        names.push(meaningful.clone());
    }
    if let Some(last) = segments.last() {
        if !is_version(last) && !names.contains(last) {
            names.push(last.clone());
        }
    }
    names
}

/// `segment` as a prefix name: lowercase ASCII letters, digits and inner
/// `-`, from its first letter on, at most 16 bytes; empty if it has no
/// letter.
fn clean_name(segment: &str) -> String {
    let mut name: String = segment
        .chars()
        .skip_while(|c| !c.is_ascii_alphabetic())
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .map(|c| {
            if c == '_' {
                '-'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .take(16)
        .collect();
    while name.ends_with('-') {
        name.pop();
    }
    name
}

/// `iri` split after its last `/` or `#` (as
/// [`split_namespace`](tern_index::namespaces::split_namespace)), when what
/// follows is in a conservative subset of Turtle's PN_LOCAL: ASCII letters,
/// digits, `_`, `-` and inner `.`; anything else is written as a full IRI.
/// One backward pass over the bytes finds the split and checks the local
/// name (every IRI of a Turtle export goes through here).
fn split_turtle_local(iri: &str) -> Option<(&str, &str)> {
    let bytes = iri.as_bytes();
    let mut at = bytes.len();
    while at > 0 {
        match bytes[at - 1] {
            b'/' | b'#' => break,
            b if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.') => at -= 1,
            _ => return None,
        }
    }
    if at == 0 {
        return None;
    }
    let local = &bytes[at..];
    if let (Some(first), Some(last)) = (local.first(), local.last()) {
        if !(first.is_ascii_alphanumeric() || *first == b'_') || *last == b'.' {
            return None;
        }
    }
    // `at` follows an ASCII byte, so it is a character boundary.
    Some(iri.split_at(at))
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
        let mut memo = NamespaceMemo::default();
        for _ in 0..2 {
            for iri in [
                "http://e/ns#a",
                "http://other/x",
                "http://e/ns#a b",
                "http://none/y",
                "http://e/ns#",
            ] {
                assert_eq!(p.shorten_memo(iri, &mut memo), p.shorten(iri), "{iri}");
            }
        }
        assert_eq!(p.shorten("http://e/ns#a b"), None);
        assert_eq!(p.shorten("http://e/ns#a."), None);
    }

    #[test]
    fn the_data_s_namespaces_get_names_of_their_own() {
        let mut p = Prefixes::for_query("PREFIX bsbm: <http://other/> ASK {}");
        p.add_namespaces(&[
            "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/".to_owned(),
            "http://purl.org/stuff/rev#".to_owned(),
            "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/instances/".to_owned(),
            "http://xmlns.com/foaf/0.1/".to_owned(),
            "http://example.org/2024/".to_owned(),
            "http://example.org/v1/".to_owned(),
        ]);
        let names: Vec<(&str, &str)> = p.iter().collect();
        // The query took `bsbm`; foaf is well known already.
        assert!(names.contains(&(
            "vocabulary",
            "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/"
        )));
        assert!(names.contains(&("rev", "http://purl.org/stuff/rev#")));
        assert!(names.contains(&(
            "instances",
            "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/instances/"
        )));
        assert!(names.contains(&("ns1", "http://example.org/2024/")));
        assert!(names.contains(&("ns2", "http://example.org/v1/")));
        assert_eq!(
            names.iter().filter(|(_, ns)| ns.contains("foaf")).count(),
            1
        );
        assert_eq!(
            p.shorten("http://purl.org/stuff/rev#text"),
            Some(("rev", "text"))
        );

        let mut plain = Prefixes::well_known();
        plain.add_namespaces(&[
            "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/vocabulary/".to_owned(),
            "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/instances/".to_owned(),
        ]);
        let names: Vec<&str> = plain.iter().map(|(p, _)| p).collect();
        assert!(names.contains(&"bsbm") && names.contains(&"instances"));
    }
}
