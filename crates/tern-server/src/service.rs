//! The SPARQL 1.1 Service Description returned by a GET without a query.

use oxrdf::{BlankNode, NamedNode, Term, Triple};
use tern_export::{GraphFormat, Prefixes, SolutionsFormat};

const SD: &str = "http://www.w3.org/ns/sparql-service-description#";
const FORMATS: &str = "http://www.w3.org/ns/formats/";

/// `updates`: the server takes SPARQL Update and Graph Store Protocol
/// writes (it was given a write credential).
pub fn describe(endpoint: &str, format: GraphFormat, updates: bool) -> Vec<u8> {
    let sd = |local: &str| NamedNode::new_unchecked(format!("{SD}{local}"));
    let service = BlankNode::new_unchecked("service");
    let mut triples = vec![
        Triple::new(service.clone(), oxrdf::vocab::rdf::TYPE, sd("Service")),
        Triple::new(
            service.clone(),
            sd("endpoint"),
            NamedNode::new_unchecked(endpoint),
        ),
        Triple::new(
            service.clone(),
            sd("supportedLanguage"),
            sd("SPARQL11Query"),
        ),
        Triple::new(service.clone(), sd("feature"), sd("UnionDefaultGraph")),
    ];
    if updates {
        triples.push(Triple::new(
            service.clone(),
            sd("supportedLanguage"),
            sd("SPARQL11Update"),
        ));
    }
    let result_formats = SolutionsFormat::ALL
        .iter()
        .filter_map(|f| match f {
            SolutionsFormat::Json => Some("SPARQL_Results_JSON"),
            SolutionsFormat::Xml => Some("SPARQL_Results_XML"),
            SolutionsFormat::Csv => Some("SPARQL_Results_CSV"),
            SolutionsFormat::Tsv => Some("SPARQL_Results_TSV"),
            SolutionsFormat::Arrow | SolutionsFormat::Parquet => None,
        })
        .chain(GraphFormat::ALL.iter().map(|f| match f {
            GraphFormat::Turtle => "Turtle",
            GraphFormat::NTriples => "N-Triples",
            GraphFormat::NQuads => "N-Quads",
            GraphFormat::RdfXml => "RDF_XML",
            GraphFormat::JsonLd | GraphFormat::JsonLdCompacted => "JSON-LD",
        }));
    for name in result_formats {
        triples.push(Triple::new(
            service.clone(),
            sd("resultFormat"),
            Term::from(NamedNode::new_unchecked(format!("{FORMATS}{name}"))),
        ));
    }
    let mut writer = format.writer(Prefixes::well_known());
    let mut out = Vec::new();
    writer.header(&mut out);
    for t in &triples {
        // Every format can express these plain triples.
        let _ = writer.triple(&mut out, t.as_ref());
    }
    writer.footer(&mut out);
    out
}
