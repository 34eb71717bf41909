//! Expected results: SPARQL result documents (XML, JSON, TSV), RDF graphs
//! (Turtle, N-Triples, RDF/XML), and result sets written as RDF with the
//! data-r2 `rs:` vocabulary.

use crate::compare::Row;
use crate::manifest::file_iri;
use oxrdf::{Graph, NamedNode, NamedOrBlankNodeRef, Term, TermRef, Triple, Variable};
use oxrdfxml::RdfXmlParser;
use oxttl::{NTriplesParser, TurtleParser};
use sparesults::{QueryResultsFormat, QueryResultsParser, ReaderQueryResultsParserOutput};
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

const RS: &str = "http://www.w3.org/2001/sw/DataAccess/tests/result-set#";
const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";

/// What a test expects.
#[derive(Debug, Clone)]
pub enum Expected {
    /// Rows aligned with `variables`, in the order of the document (or of
    /// `rs:index` for RDF result sets).
    Solutions {
        variables: Vec<Variable>,
        rows: Vec<Row>,
    },
    Boolean(bool),
    Graph(Vec<Triple>),
}

fn extension(path: &Path) -> String {
    path.extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// Whether a file holds an RDF graph (as opposed to a result document).
pub fn is_graph_file(path: &Path) -> bool {
    matches!(extension(path).as_str(), "ttl" | "nt" | "rdf")
}

/// Reads an RDF graph file, resolving relative IRIs against its `file://` IRI.
pub fn read_graph_file(path: &Path) -> Result<Vec<Triple>, String> {
    let base = file_iri(path);
    let open = || {
        File::open(path)
            .map(BufReader::new)
            .map_err(|e| format!("{}: {e}", path.display()))
    };
    let at = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    match extension(path).as_str() {
        "ttl" => TurtleParser::new()
            .with_base_iri(base)
            .map_err(|e| at(&e))?
            .for_reader(open()?)
            .map(|t| t.map_err(|e| at(&e)))
            .collect(),
        "nt" => NTriplesParser::new()
            .for_reader(open()?)
            .map(|t| t.map_err(|e| at(&e)))
            .collect(),
        "rdf" => RdfXmlParser::new()
            .with_base_iri(base)
            .map_err(|e| at(&e))?
            .for_reader(open()?)
            .map(|t| t.map_err(|e| at(&e)))
            .collect(),
        other => Err(format!("{}: unknown graph format .{other}", path.display())),
    }
}

/// Reads an expected result. `wants_graph` is true for CONSTRUCT and DESCRIBE
/// queries; for SELECT and ASK an RDF file is read as an `rs:ResultSet`.
pub fn read_expected(path: &Path, wants_graph: bool) -> Result<Expected, String> {
    let format = match extension(path).as_str() {
        "srx" | "xml" => QueryResultsFormat::Xml,
        "srj" | "json" => QueryResultsFormat::Json,
        "tsv" => QueryResultsFormat::Tsv,
        "csv" => return Err("CSV results cannot be read back (no datatypes)".to_owned()),
        _ => {
            let triples = read_graph_file(path)?;
            return if wants_graph {
                Ok(Expected::Graph(triples))
            } else {
                result_set_from_graph(&triples)
            };
        }
    };
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let at = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    match QueryResultsParser::from_format(format)
        .for_reader(BufReader::new(file))
        .map_err(|e| at(&e))?
    {
        ReaderQueryResultsParserOutput::Boolean(b) => Ok(Expected::Boolean(b)),
        ReaderQueryResultsParserOutput::Solutions(solutions) => {
            let variables = solutions.variables().to_vec();
            let mut rows = Vec::new();
            for solution in solutions {
                let solution = solution.map_err(|e| at(&e))?;
                rows.push(variables.iter().map(|v| solution.get(v).cloned()).collect());
            }
            Ok(Expected::Solutions { variables, rows })
        }
    }
}

fn rs(local: &str) -> NamedNode {
    NamedNode::new_unchecked(format!("{RS}{local}"))
}

fn literal_value(term: TermRef<'_>) -> Option<String> {
    match term {
        TermRef::Literal(l) => Some(l.value().to_owned()),
        _ => None,
    }
}

fn as_subject(term: TermRef<'_>) -> Option<NamedOrBlankNodeRef<'_>> {
    match term {
        TermRef::NamedNode(n) => Some(n.into()),
        TermRef::BlankNode(b) => Some(b.into()),
        _ => None,
    }
}

/// Converts a data-r2 result set graph (`rs:ResultSet` with `rs:resultVariable`,
/// `rs:solution`/`rs:binding`/`rs:variable`/`rs:value`, optional `rs:index`, or
/// `rs:boolean`) into an expected result.
pub fn result_set_from_graph(triples: &[Triple]) -> Result<Expected, String> {
    let mut graph = Graph::new();
    for t in triples {
        graph.insert(t);
    }
    let result_set = graph
        .subject_for_predicate_object(
            NamedNode::new_unchecked(RDF_TYPE).as_ref(),
            rs("ResultSet").as_ref(),
        )
        .or_else(|| {
            ["resultVariable", "solution", "boolean"]
                .iter()
                .find_map(|p| {
                    graph
                        .triples_for_predicate(&rs(p))
                        .next()
                        .map(|t| t.subject)
                })
        });
    let Some(result_set) = result_set else {
        // An empty graph is an empty result set without variables.
        return if triples.is_empty() {
            Ok(Expected::Solutions {
                variables: Vec::new(),
                rows: Vec::new(),
            })
        } else {
            Err("RDF result has no rs:ResultSet".to_owned())
        };
    };
    if let Some(b) = graph.object_for_subject_predicate(result_set, &rs("boolean")) {
        return match b {
            TermRef::Literal(l) if l.value() == "true" || l.value() == "1" => {
                Ok(Expected::Boolean(true))
            }
            TermRef::Literal(l) if l.value() == "false" || l.value() == "0" => {
                Ok(Expected::Boolean(false))
            }
            other => Err(format!("bad rs:boolean {other}")),
        };
    }
    let mut names: Vec<String> = graph
        .objects_for_subject_predicate(result_set, &rs("resultVariable"))
        .filter_map(literal_value)
        .collect();
    names.sort();
    names.dedup();
    // (rs:index, bindings) per solution
    type Bindings = Vec<(String, Term)>;
    let mut solutions: Vec<(Option<i64>, Bindings)> = Vec::new();
    for solution in graph.objects_for_subject_predicate(result_set, &rs("solution")) {
        let Some(solution) = as_subject(solution) else {
            return Err(format!("bad rs:solution {solution}"));
        };
        let index = graph
            .object_for_subject_predicate(solution, &rs("index"))
            .and_then(literal_value)
            .and_then(|v| v.trim().parse().ok());
        let mut bindings = Vec::new();
        for binding in graph.objects_for_subject_predicate(solution, &rs("binding")) {
            let Some(binding) = as_subject(binding) else {
                return Err(format!("bad rs:binding {binding}"));
            };
            let variable = graph
                .object_for_subject_predicate(binding, &rs("variable"))
                .and_then(literal_value)
                .ok_or("rs:binding without rs:variable")?;
            let value = graph
                .object_for_subject_predicate(binding, &rs("value"))
                .ok_or("rs:binding without rs:value")?;
            if !names.contains(&variable) {
                names.push(variable.clone());
            }
            bindings.push((variable, value.into_owned()));
        }
        solutions.push((index, bindings));
    }
    // Solutions without an index have no order; keep them after indexed ones.
    solutions.sort_by_key(|(index, _)| index.unwrap_or(i64::MAX));
    let variables: Vec<Variable> = names.iter().map(Variable::new_unchecked).collect();
    let rows = solutions
        .into_iter()
        .map(|(_, bindings)| {
            names
                .iter()
                .map(|n| {
                    bindings
                        .iter()
                        .find(|(v, _)| v == n)
                        .map(|(_, t)| t.clone())
                })
                .collect()
        })
        .collect();
    Ok(Expected::Solutions { variables, rows })
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::Literal;

    #[test]
    fn reads_srx_and_srj() {
        let dir = tempfile::tempdir().unwrap();
        let srx = dir.path().join("r.srx");
        std::fs::write(
            &srx,
            r#"<?xml version="1.0"?>
<sparql xmlns="http://www.w3.org/2005/sparql-results#">
  <head><variable name="x"/><variable name="y"/></head>
  <results>
    <result><binding name="x"><uri>http://ex/a</uri></binding></result>
    <result><binding name="y"><literal datatype="http://www.w3.org/2001/XMLSchema#integer">1</literal></binding>
            <binding name="x"><bnode>b0</bnode></binding></result>
  </results>
</sparql>"#,
        )
        .unwrap();
        let Expected::Solutions { variables, rows } = read_expected(&srx, false).unwrap() else {
            panic!("not solutions")
        };
        assert_eq!(
            variables,
            vec![Variable::new_unchecked("x"), Variable::new_unchecked("y")]
        );
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[0][0],
            Some(NamedNode::new_unchecked("http://ex/a").into())
        );
        assert_eq!(rows[0][1], None);
        assert!(matches!(rows[1][0], Some(Term::BlankNode(_))));
        let srj = dir.path().join("r.srj");
        std::fs::write(&srj, r#"{"head":{},"boolean":true}"#).unwrap();
        assert!(matches!(
            read_expected(&srj, false).unwrap(),
            Expected::Boolean(true)
        ));
    }

    #[test]
    fn reads_rdf_result_sets() {
        let dir = tempfile::tempdir().unwrap();
        let ttl = dir.path().join("r.ttl");
        std::fs::write(
            &ttl,
            r#"@prefix rs: <http://www.w3.org/2001/sw/DataAccess/tests/result-set#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
[] rdf:type rs:ResultSet ; rs:resultVariable "x", "y" ;
   rs:solution [ rs:index 2 ; rs:binding [ rs:variable "x" ; rs:value "second" ] ] ;
   rs:solution [ rs:index 1 ; rs:binding [ rs:variable "x" ; rs:value <g.ttl> ] ;
                              rs:binding [ rs:variable "y" ; rs:value 7 ] ] ."#,
        )
        .unwrap();
        let Expected::Solutions { variables, rows } = read_expected(&ttl, false).unwrap() else {
            panic!("not solutions")
        };
        assert_eq!(variables.len(), 2);
        assert_eq!(variables[0].as_str(), "x");
        let g = format!("{}/g.ttl", file_iri(dir.path()));
        assert_eq!(rows[0][0], Some(NamedNode::new_unchecked(g).into()));
        assert_eq!(rows[0][1], Some(Literal::from(7).into()));
        assert_eq!(
            rows[1][0],
            Some(Literal::new_simple_literal("second").into())
        );
        assert_eq!(rows[1][1], None);

        let ask = dir.path().join("a.ttl");
        std::fs::write(
            &ask,
            r#"@prefix rs: <http://www.w3.org/2001/sw/DataAccess/tests/result-set#> .
[] a rs:ResultSet ; rs:boolean false ."#,
        )
        .unwrap();
        assert!(matches!(
            read_expected(&ask, false).unwrap(),
            Expected::Boolean(false)
        ));
        // The same file read for a CONSTRUCT is a graph.
        assert!(matches!(read_expected(&ask, true).unwrap(), Expected::Graph(g) if g.len() == 2));
    }

    #[test]
    fn reads_rdf_xml_graphs() {
        let dir = tempfile::tempdir().unwrap();
        let rdf = dir.path().join("d.rdf");
        std::fs::write(
            &rdf,
            r#"<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://ex/">
  <rdf:Description rdf:about="a"><ex:p>v</ex:p></rdf:Description>
</rdf:RDF>"#,
        )
        .unwrap();
        let triples = read_graph_file(&rdf).unwrap();
        assert_eq!(triples.len(), 1);
        assert_eq!(
            triples[0].subject.to_string(),
            format!("<{}/a>", file_iri(dir.path()))
        );
    }
}
