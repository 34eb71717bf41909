//! Reading W3C test manifests: Turtle files of `mf:Manifest`s whose `mf:entries`
//! list the tests and whose `mf:include` lists name further manifests.

use oxrdf::{Graph, NamedNode, NamedNodeRef, NamedOrBlankNodeRef, TermRef};
use oxttl::TurtleParser;
use std::collections::HashSet;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

pub const MF: &str = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#";
pub const QT: &str = "http://www.w3.org/2001/sw/DataAccess/tests/test-query#";
pub const DAWGT: &str = "http://www.w3.org/2001/sw/DataAccess/tests/test-dawg#";
pub const UT: &str = "http://www.w3.org/2009/sparql/tests/test-update#";
pub const SD: &str = "http://www.w3.org/ns/sparql-service-description#";
const RDF: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";
const RDFS: &str = "http://www.w3.org/2000/01/rdf-schema#";

/// What a test checks, from its `rdf:type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestKind {
    QueryEvaluation,
    PositiveSyntax,
    NegativeSyntax,
    UpdateEvaluation,
    PositiveUpdateSyntax,
    NegativeUpdateSyntax,
    CsvResultFormat,
    /// Any other type (update, protocol, service description...), by IRI.
    Other(String),
}

/// One test of a manifest. File references are IRIs (`file://` for local files).
#[derive(Debug, Clone)]
pub struct TestCase {
    pub id: String,
    pub kind: TestKind,
    pub name: Option<String>,
    /// The query file (for syntax tests: the action itself).
    pub query: Option<String>,
    /// `ut:request`: the update file of an update evaluation test.
    pub update: Option<String>,
    /// The expected store after an update: `ut:data` of `mf:result`…
    pub result_data: Vec<String>,
    /// …and its `ut:graphData` as (graph name, file).
    pub result_graph_data: Vec<(String, String)>,
    /// `qt:data`: loaded into the default graph.
    pub data: Vec<String>,
    /// `qt:graphData`: (graph name, file) pairs.
    pub graph_data: Vec<(String, String)>,
    pub result: Option<String>,
    pub requires: Vec<String>,
    pub approval: Option<String>,
    /// `mf:resultCardinality mf:LaxCardinality` (REDUCED).
    pub lax_cardinality: bool,
    pub service_data: bool,
    /// The test needs an entailment regime or profile (`sd:entailmentRegime`,
    /// `sd:entailmentProfile`).
    pub entailment: bool,
    /// `sd:entailmentRegime`: the regimes (IRIs) the expected result holds
    /// under, given as one IRI or an RDF list.
    pub entailment_regimes: Vec<String>,
}

impl TestCase {
    /// Why the runner does not run this test, if it does not.
    pub fn skip_reason(&self) -> Option<&'static str> {
        self.skip_reason_under(None)
    }

    /// Why the runner does not run this test when queries are answered
    /// under the entailment regime `regime` (an IRI; `None`: simple
    /// entailment): a test is run under the regimes it lists, and tests
    /// that list none under simple entailment only.
    pub fn skip_reason_under(&self, regime: Option<&str>) -> Option<&'static str> {
        match regime {
            None if self.entailment => return Some("entailment"),
            Some(r) if !self.entailment_regimes.iter().any(|listed| listed == r) => {
                return Some("other entailment regimes");
            }
            _ => {}
        }
        if self.service_data {
            return Some("federated query (SERVICE)");
        }
        if let TestKind::Other(kind) = &self.kind {
            let local = kind.rsplit(['#', '/']).next().unwrap_or(kind);
            return Some(if local.contains("Update") {
                "update"
            } else if local.contains("Protocol") {
                "protocol"
            } else if local.contains("ServiceDescription") {
                "service description"
            } else {
                "unknown test type"
            });
        }
        if let Some(approval) = &self.approval {
            let local = approval.rsplit('#').next().unwrap_or(approval);
            if matches!(
                local,
                "Withdrawn" | "NotApproved" | "Rejected" | "Obsoleted"
            ) {
                return Some("not approved");
            }
        }
        let files = self
            .query
            .iter()
            .chain(&self.update)
            .chain(&self.result_data)
            .chain(self.result_graph_data.iter().map(|(_, f)| f))
            .chain(&self.data)
            .chain(self.graph_data.iter().map(|(_, f)| f))
            .chain(&self.result);
        for iri in files {
            if !iri.starts_with("file:") {
                return Some("remote (http) files");
            }
        }
        None
    }
}

/// The `file://` IRI of a local path (made absolute and canonical, as the index
/// builder does for Turtle bases).
pub fn file_iri(path: &Path) -> String {
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    format!("file://{}", path.display())
}

/// The local path of a `file://` IRI.
pub fn iri_to_path(iri: &str) -> Option<PathBuf> {
    let rest = iri.strip_prefix("file://")?;
    let rest = rest.split(['#', '?']).next().unwrap_or(rest);
    Some(PathBuf::from(percent_decode(rest)))
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            if let Some(Ok(b)) = s.get(i + 1..i + 3).map(|h| u8::from_str_radix(h, 16)) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses a Turtle file with its `file://` IRI as base.
pub fn parse_turtle_file(path: &Path) -> Result<Graph, String> {
    let base = file_iri(path);
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let parser = TurtleParser::new()
        .with_base_iri(base)
        .map_err(|e| e.to_string())?;
    let mut graph = Graph::new();
    for triple in parser.for_reader(BufReader::new(file)) {
        let triple = triple.map_err(|e| format!("{}: {e}", path.display()))?;
        graph.insert(&triple);
    }
    Ok(graph)
}

fn nn(ns: &str, local: &str) -> NamedNode {
    NamedNode::new_unchecked(format!("{ns}{local}"))
}

/// The members of an RDF list.
pub fn read_list<'a>(graph: &'a Graph, head: TermRef<'a>) -> Vec<TermRef<'a>> {
    let first = nn(RDF, "first");
    let rest = nn(RDF, "rest");
    let mut out = Vec::new();
    let mut node = head;
    let mut seen = HashSet::new();
    loop {
        let subject = match node {
            TermRef::NamedNode(n) if n.as_str() == format!("{RDF}nil") => break,
            TermRef::NamedNode(n) => NamedOrBlankNodeRef::from(n),
            TermRef::BlankNode(b) => NamedOrBlankNodeRef::from(b),
            _ => break,
        };
        if !seen.insert(subject.to_string()) {
            break;
        }
        if let Some(value) = graph.object_for_subject_predicate(subject, &first) {
            out.push(value);
        }
        match graph.object_for_subject_predicate(subject, &rest) {
            Some(next) => node = next,
            None => break,
        }
    }
    out
}

fn as_subject(term: TermRef<'_>) -> Option<NamedOrBlankNodeRef<'_>> {
    match term {
        TermRef::NamedNode(n) => Some(n.into()),
        TermRef::BlankNode(b) => Some(b.into()),
        _ => None,
    }
}

fn iri_of(term: TermRef<'_>) -> Option<String> {
    match term {
        TermRef::NamedNode(n) => Some(n.as_str().to_owned()),
        _ => None,
    }
}

/// Reads a manifest and the manifests it includes, in order.
pub fn load_manifest(path: &Path) -> Result<Vec<TestCase>, String> {
    let mut tests = Vec::new();
    let mut visited = HashSet::new();
    load_into(path, &mut tests, &mut visited)?;
    Ok(tests)
}

fn load_into(
    path: &Path,
    tests: &mut Vec<TestCase>,
    visited: &mut HashSet<PathBuf>,
) -> Result<(), String> {
    let canonical = std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !visited.insert(canonical.clone()) {
        return Ok(());
    }
    let graph = parse_turtle_file(&canonical)?;
    let manifest_iri = NamedNode::new_unchecked(file_iri(&canonical));
    let rdf_type = nn(RDF, "type");
    let manifest_class = nn(MF, "Manifest");
    // The manifest node is normally `<>`; fall back to any mf:Manifest.
    let mut manifests: Vec<NamedOrBlankNodeRef<'_>> = vec![manifest_iri.as_ref().into()];
    for s in graph.subjects_for_predicate_object(&rdf_type, &manifest_class) {
        if !manifests.contains(&s) {
            manifests.push(s);
        }
    }
    let include = nn(MF, "include");
    let entries = nn(MF, "entries");
    for manifest in manifests {
        for list in graph.objects_for_subject_predicate(manifest, &include) {
            for item in read_list(&graph, list) {
                let Some(iri) = iri_of(item) else { continue };
                let Some(sub) = iri_to_path(&iri) else {
                    return Err(format!("cannot follow non-file include {iri}"));
                };
                load_into(&sub, tests, visited)?;
            }
        }
        for list in graph.objects_for_subject_predicate(manifest, &entries) {
            for item in read_list(&graph, list) {
                if let Some(test) = read_test(&graph, item) {
                    tests.push(test);
                }
            }
        }
    }
    Ok(())
}

fn read_test(graph: &Graph, node: TermRef<'_>) -> Option<TestCase> {
    let subject = as_subject(node)?;
    let id = match node {
        TermRef::NamedNode(n) => n.as_str().to_owned(),
        other => other.to_string(),
    };
    let get = |p: &NamedNode| graph.object_for_subject_predicate(subject, p);
    let all = |p: &NamedNode| -> Vec<TermRef<'_>> {
        graph.objects_for_subject_predicate(subject, p).collect()
    };
    let types: Vec<String> = all(&nn(RDF, "type"))
        .into_iter()
        .filter_map(iri_of)
        .collect();
    let kind = types
        .iter()
        .find_map(|t| {
            let local = t.strip_prefix(MF)?;
            Some(match local {
                "QueryEvaluationTest" => TestKind::QueryEvaluation,
                "PositiveSyntaxTest" | "PositiveSyntaxTest11" => TestKind::PositiveSyntax,
                "NegativeSyntaxTest" | "NegativeSyntaxTest11" => TestKind::NegativeSyntax,
                "UpdateEvaluationTest" => TestKind::UpdateEvaluation,
                "PositiveUpdateSyntaxTest11" => TestKind::PositiveUpdateSyntax,
                "NegativeUpdateSyntaxTest11" => TestKind::NegativeUpdateSyntax,
                "CSVResultFormatTest" => TestKind::CsvResultFormat,
                _ => return None,
            })
        })
        .unwrap_or_else(|| TestKind::Other(types.first().cloned().unwrap_or_default()));
    let name = get(&nn(MF, "name")).and_then(|t| match t {
        TermRef::Literal(l) => Some(l.value().to_owned()),
        _ => None,
    });
    let mut test = TestCase {
        id,
        kind,
        name,
        query: None,
        update: None,
        result_data: Vec::new(),
        result_graph_data: Vec::new(),
        data: Vec::new(),
        graph_data: Vec::new(),
        result: get(&nn(MF, "result")).and_then(iri_of),
        requires: all(&nn(MF, "requires"))
            .into_iter()
            .filter_map(iri_of)
            .collect(),
        approval: get(&nn(DAWGT, "approval")).and_then(iri_of),
        lax_cardinality: get(&nn(MF, "resultCardinality"))
            .and_then(iri_of)
            .is_some_and(|c| c == format!("{MF}LaxCardinality")),
        service_data: false,
        entailment: false,
        entailment_regimes: Vec::new(),
    };
    match get(&nn(MF, "action")) {
        Some(TermRef::NamedNode(n)) => test.query = Some(n.as_str().to_owned()),
        Some(action @ TermRef::BlankNode(_)) => read_action(graph, action, &mut test),
        _ => {}
    }
    if let Some(result @ TermRef::BlankNode(_)) = get(&nn(MF, "result")) {
        // An update test's expected store: [ ut:data <f> ; ut:graphData [...] ].
        let mut expected = TestCase {
            data: Vec::new(),
            graph_data: Vec::new(),
            ..test.clone()
        };
        read_action(graph, result, &mut expected);
        test.result_data = expected.data;
        test.result_graph_data = expected.graph_data;
    }
    Some(test)
}

fn read_action(graph: &Graph, action: TermRef<'_>, test: &mut TestCase) {
    let Some(subject) = as_subject(action) else {
        return;
    };
    let objects = |ns: &str, local: &str| -> Vec<TermRef<'_>> {
        graph
            .objects_for_subject_predicate(
                subject,
                NamedNodeRef::new_unchecked(&format!("{ns}{local}")),
            )
            .collect()
    };
    test.query = objects(QT, "query").into_iter().find_map(iri_of);
    test.update = objects(UT, "request").into_iter().find_map(iri_of);
    test.data = objects(QT, "data")
        .into_iter()
        .chain(objects(UT, "data"))
        .filter_map(iri_of)
        .collect();
    for g in objects(QT, "graphData")
        .into_iter()
        .chain(objects(UT, "graphData"))
    {
        match g {
            TermRef::NamedNode(n) => test
                .graph_data
                .push((n.as_str().to_owned(), n.as_str().to_owned())),
            TermRef::BlankNode(b) => {
                // [ qt:graph <file> ; rdfs:label "name" ] (update-style)
                let file = graph
                    .object_for_subject_predicate(b, &nn(QT, "graph"))
                    .or_else(|| graph.object_for_subject_predicate(b, &nn(UT, "graph")))
                    .and_then(iri_of);
                let label = graph
                    .object_for_subject_predicate(b, &nn(RDFS, "label"))
                    .and_then(|t| match t {
                        TermRef::Literal(l) => Some(l.value().to_owned()),
                        _ => None,
                    });
                if let Some(file) = file {
                    test.graph_data
                        .push((label.unwrap_or_else(|| file.clone()), file));
                }
            }
            _ => {}
        }
    }
    test.service_data = !objects(QT, "serviceData").is_empty();
    test.entailment =
        !objects(SD, "entailmentRegime").is_empty() || !objects(SD, "entailmentProfile").is_empty();
    // One IRI, or a list of them.
    test.entailment_regimes = objects(SD, "entailmentRegime")
        .into_iter()
        .flat_map(|regime| match regime {
            TermRef::NamedNode(n) if n.as_str() != format!("{RDF}nil") => vec![regime],
            TermRef::NamedNode(_) => Vec::new(),
            list => read_list(graph, list),
        })
        .filter_map(iri_of)
        .collect();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_entries_includes_and_actions() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(
            dir.path().join("manifest.ttl"),
            r#"@prefix mf: <http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#> .
<> a mf:Manifest ; mf:include ( <sub/manifest.ttl> ) ."#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("sub/manifest.ttl"),
            r#"@prefix mf: <http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#> .
@prefix qt: <http://www.w3.org/2001/sw/DataAccess/tests/test-query#> .
@prefix dawgt: <http://www.w3.org/2001/sw/DataAccess/tests/test-dawg#> .
@prefix ut: <http://www.w3.org/2009/sparql/tests/test-update#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix : <http://example/m#> .
<> a mf:Manifest ; mf:entries ( :t1 :t2 :t3 ) .
:t1 a mf:QueryEvaluationTest ; mf:name "one" ;
   mf:action [ qt:query <q.rq> ; qt:data <d.ttl> ; qt:graphData <g1.ttl>, <g2.ttl> ] ;
   mf:result <r.srx> ; dawgt:approval dawgt:Approved .
:t2 a mf:NegativeSyntaxTest11 ; mf:action <bad.rq> .
:t3 a mf:UpdateEvaluationTest ; mf:action [ ut:request <u.ru> ; ut:data <d.ttl> ] ;
   mf:result [ ut:graphData [ ut:graph <g1.ttl> ; rdfs:label "http://example/g" ] ] ."#,
        )
        .unwrap();
        let tests = load_manifest(&dir.path().join("manifest.ttl")).unwrap();
        assert_eq!(tests.len(), 3);
        let t1 = &tests[0];
        assert_eq!(t1.id, "http://example/m#t1");
        assert_eq!(t1.kind, TestKind::QueryEvaluation);
        assert_eq!(t1.name.as_deref(), Some("one"));
        let sub = file_iri(&dir.path().join("sub"));
        assert_eq!(t1.query.as_deref(), Some(format!("{sub}/q.rq").as_str()));
        assert_eq!(t1.data, vec![format!("{sub}/d.ttl")]);
        assert_eq!(t1.graph_data.len(), 2);
        assert_eq!(t1.result.as_deref(), Some(format!("{sub}/r.srx").as_str()));
        assert_eq!(t1.skip_reason(), None);
        assert_eq!(tests[1].kind, TestKind::NegativeSyntax);
        assert_eq!(
            tests[1].query.as_deref(),
            Some(format!("{sub}/bad.rq").as_str())
        );
        let t3 = &tests[2];
        assert_eq!(t3.kind, TestKind::UpdateEvaluation);
        assert_eq!(t3.update.as_deref(), Some(format!("{sub}/u.ru").as_str()));
        assert_eq!(t3.data, vec![format!("{sub}/d.ttl")]);
        assert!(t3.result_data.is_empty());
        assert_eq!(
            t3.result_graph_data,
            vec![("http://example/g".to_owned(), format!("{sub}/g1.ttl"))]
        );
        assert_eq!(t3.skip_reason(), None);
        assert_eq!(
            iri_to_path(&format!("{sub}/a%20b.rq")).unwrap(),
            std::fs::canonicalize(dir.path().join("sub"))
                .unwrap()
                .join("a b.rq")
        );
    }

    #[test]
    fn reads_entailment_regimes_as_an_iri_or_a_list() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("manifest.ttl"),
            r#"@prefix mf: <http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#> .
@prefix qt: <http://www.w3.org/2001/sw/DataAccess/tests/test-query#> .
@prefix sd: <http://www.w3.org/ns/sparql-service-description#> .
@prefix ent: <http://www.w3.org/ns/entailment/> .
@prefix : <http://example/m#> .
<> a mf:Manifest ; mf:entries ( :one :list :none ) .
:one a mf:QueryEvaluationTest ;
   mf:action [ qt:query <q.rq> ; qt:data <d.ttl> ; sd:entailmentRegime ent:D ] ;
   mf:result <r.srx> .
:list a mf:QueryEvaluationTest ;
   mf:action [ qt:query <q.rq> ; sd:entailmentRegime ( ent:OWL-Direct ent:RDFS ) ] ;
   mf:result <r.srx> .
:none a mf:QueryEvaluationTest ; mf:action [ qt:query <q.rq> ] ; mf:result <r.srx> ."#,
        )
        .unwrap();
        let tests = load_manifest(&dir.path().join("manifest.ttl")).unwrap();
        let ent = |local: &str| format!("http://www.w3.org/ns/entailment/{local}");
        let rdfs = ent("RDFS");
        assert_eq!(tests[0].entailment_regimes, vec![ent("D")]);
        assert_eq!(
            tests[1].entailment_regimes,
            vec![ent("OWL-Direct"), ent("RDFS")]
        );
        assert!(tests[2].entailment_regimes.is_empty());
        let skips: Vec<_> = tests.iter().map(TestCase::skip_reason).collect();
        assert_eq!(skips, [Some("entailment"), Some("entailment"), None]);
        let under_rdfs: Vec<_> = tests
            .iter()
            .map(|t| t.skip_reason_under(Some(&rdfs)))
            .collect();
        let other = Some("other entailment regimes");
        assert_eq!(under_rdfs, [other, None, other]);
    }
}
