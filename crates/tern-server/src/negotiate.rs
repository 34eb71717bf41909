//! Content negotiation: result formats by `Accept` (or `format=`), content
//! codings by `Accept-Encoding`, both with q-values. Ties go to the server's
//! order of preference (listed first = preferred).

use crate::encoding::Encoding;
use tern_export::{GraphFormat, SolutionsFormat};

/// Media types each format answers to, the canonical one first.
fn solutions_types(format: SolutionsFormat) -> &'static [&'static str] {
    match format {
        SolutionsFormat::Json => &["application/sparql-results+json", "application/json"],
        SolutionsFormat::Xml => &[
            "application/sparql-results+xml",
            "application/xml",
            "text/xml",
        ],
        SolutionsFormat::Csv => &["text/csv"],
        SolutionsFormat::Tsv => &["text/tab-separated-values"],
        SolutionsFormat::Arrow => &["application/vnd.apache.arrow.stream"],
        SolutionsFormat::Parquet => &["application/vnd.apache.parquet"],
    }
}

fn graph_types(format: GraphFormat) -> &'static [&'static str] {
    match format {
        GraphFormat::Turtle => &["text/turtle", "application/x-turtle"],
        GraphFormat::NTriples => &["application/n-triples", "text/plain"],
        GraphFormat::NQuads => &["application/n-quads"],
        GraphFormat::RdfXml => &["application/rdf+xml", "application/xml", "text/xml"],
        GraphFormat::JsonLd | GraphFormat::JsonLdCompacted => {
            &["application/ld+json", "application/json"]
        }
    }
}

/// One media range of an `Accept` header.
#[derive(Debug)]
struct Range {
    kind: String,
    subtype: String,
    q: f32,
    /// The IRIs of its `profile` parameter, a space-separated list, quoted
    /// or not (JSON-LD names its forms so).
    profiles: Vec<String>,
}

fn parse_accept(accept: &str) -> Vec<Range> {
    accept
        .split(',')
        .filter_map(|item| {
            let mut parts = item.split(';');
            let (kind, subtype) = parts.next()?.trim().split_once('/')?;
            let params: Vec<&str> = parts.collect();
            let profiles = params
                .iter()
                .filter_map(|p| p.trim().split_once('='))
                .filter(|(k, _)| k.trim().eq_ignore_ascii_case("profile"))
                .flat_map(|(_, v)| v.trim().trim_matches('"').split_whitespace())
                .map(str::to_owned)
                .collect();
            Some(Range {
                kind: kind.trim().to_ascii_lowercase(),
                subtype: subtype.trim().to_ascii_lowercase(),
                q: quality(params.into_iter()),
                profiles,
            })
        })
        .collect()
}

/// The `q=` of a header item's parameters (1 when absent or unreadable).
fn quality<'a>(params: impl Iterator<Item = &'a str>) -> f32 {
    for p in params {
        if let Some((k, v)) = p.trim().split_once('=') {
            if k.trim().eq_ignore_ascii_case("q") {
                return v
                    .trim()
                    .parse::<f32>()
                    .ok()
                    .filter(|q| q.is_finite())
                    .map_or(1.0, |q| q.clamp(0.0, 1.0));
            }
        }
    }
    1.0
}

/// The q a media type gets: from the most specific range that matches it.
fn q_of(ranges: &[Range], media: &str) -> f32 {
    let (kind, subtype) = media.split_once('/').unwrap_or((media, ""));
    let mut best: Option<(u8, f32)> = None;
    for r in ranges {
        let specificity = if r.kind == kind && r.subtype == subtype {
            2
        } else if r.kind == kind && r.subtype == "*" {
            1
        } else if r.kind == "*" && r.subtype == "*" {
            0
        } else {
            continue;
        };
        if best.is_none_or(|(s, _)| specificity > s) {
            best = Some((specificity, r.q));
        }
    }
    best.map_or(0.0, |(_, q)| q)
}

/// Picks the candidate with the highest q (> 0); the first on ties.
fn choose<F: Copy>(
    accept: Option<&str>,
    candidates: &[F],
    types: fn(F) -> &'static [&'static str],
) -> Option<F> {
    let accept = accept.map(str::trim).filter(|a| !a.is_empty());
    let Some(accept) = accept else {
        return candidates.first().copied();
    };
    let ranges = parse_accept(accept);
    let mut best: Option<(F, f32)> = None;
    for &c in candidates {
        let q = types(c)
            .iter()
            .map(|t| q_of(&ranges, t))
            .fold(0.0, f32::max);
        if q > 0.0 && best.is_none_or(|(_, b)| q > b) {
            best = Some((c, q));
        }
    }
    best.map(|(c, _)| c)
}

/// The format for SELECT/ASK results: by `format=` if it names one, else
/// `Accept` (clients such as SPARQLWrapper send `format=n3` or `json-ld`
/// with an `Accept` that fits).
pub fn solutions_format(accept: Option<&str>, format: Option<&str>) -> Option<SolutionsFormat> {
    let named = format.and_then(|name| {
        SolutionsFormat::ALL.into_iter().find(|f| {
            f.name().eq_ignore_ascii_case(name)
                || solutions_types(*f)
                    .iter()
                    .any(|t| t.eq_ignore_ascii_case(name))
        })
    });
    named.or_else(|| choose(accept, &SolutionsFormat::ALL, solutions_types))
}

/// The format for CONSTRUCT/DESCRIBE results (and the service description):
/// by `format=` if it names one, else `Accept`.
pub fn graph_format(accept: Option<&str>, format: Option<&str>) -> Option<GraphFormat> {
    let named = format.and_then(|name| {
        let name = name.to_ascii_lowercase();
        // Browser-friendly aliases shared with the solutions formats, and
        // the names SPARQLWrapper sends (N3 is a superset of Turtle).
        let alias = match name.as_str() {
            "json" | "json-ld" => "jsonld",
            "jsonld-compacted" | "json-ld-compacted" => {
                return Some(GraphFormat::JsonLdCompacted);
            }
            "xml" | "rdf" => "rdfxml",
            "ttl" | "n3" => "turtle",
            "nt" => "ntriples",
            "nq" => "nquads",
            other => other,
        };
        GraphFormat::ALL
            .into_iter()
            .find(|f| f.name() == alias || graph_types(*f).contains(&alias))
    });
    match named.or_else(|| choose(accept, &GraphFormat::ALL, graph_types)) {
        Some(GraphFormat::JsonLd) if accept.is_some_and(asks_compacted_json_ld) => {
            Some(GraphFormat::JsonLdCompacted)
        }
        other => other,
    }
}

/// The JSON-LD profile that asks for the compacted form.
const COMPACTED: &str = "http://www.w3.org/ns/json-ld#compacted";

/// Whether an `Accept` range for JSON-LD names the compacted profile.
fn asks_compacted_json_ld(accept: &str) -> bool {
    parse_accept(accept).iter().any(|range| {
        range.kind == "application"
            && range.subtype == "ld+json"
            && range.profiles.iter().any(|p| p == COMPACTED)
    })
}

/// The content coding by `Accept-Encoding`; identity when none is asked for
/// or acceptable. Preference on ties: zstd (fastest per byte saved), gzip,
/// br, deflate.
pub fn encoding(accept_encoding: Option<&str>) -> Encoding {
    const PREFERENCE: [Encoding; 4] = [
        Encoding::Zstd,
        Encoding::Gzip,
        Encoding::Brotli,
        Encoding::Deflate,
    ];
    let Some(header) = accept_encoding else {
        return Encoding::Identity;
    };
    let items: Vec<(String, f32)> = header
        .split(',')
        .filter_map(|item| {
            let mut parts = item.split(';');
            let name = parts.next()?.trim().to_ascii_lowercase();
            (!name.is_empty()).then(|| (name, quality(parts)))
        })
        .collect();
    let q = |name: &str| {
        items
            .iter()
            .find(|(n, _)| n == name)
            .or_else(|| items.iter().find(|(n, _)| n == "*"))
            .map_or(0.0, |(_, q)| *q)
    };
    let mut best = (Encoding::Identity, 0.0f32);
    for e in PREFERENCE {
        let q = q(e.token());
        if q > best.1 {
            best = (e, q);
        }
    }
    best.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_with_q_values() {
        use SolutionsFormat::*;
        assert_eq!(solutions_format(None, None), Some(Json));
        assert_eq!(solutions_format(Some("*/*"), None), Some(Json));
        assert_eq!(
            solutions_format(
                Some("application/sparql-results+json;q=0.5, text/csv"),
                None
            ),
            Some(Csv)
        );
        assert_eq!(
            solutions_format(Some("text/*;q=0.3, text/tab-separated-values;q=0.9"), None),
            Some(Tsv)
        );
        assert_eq!(
            solutions_format(Some("application/sparql-results+xml, */*;q=0.1"), None),
            Some(Xml)
        );
        assert_eq!(solutions_format(Some("image/png"), None), None);
        assert_eq!(solutions_format(Some("text/csv;q=0"), None), None);
        assert_eq!(solutions_format(Some("image/png"), Some("tsv")), Some(Tsv));
        // An unknown format= falls back to Accept (SPARQLWrapper's format=n3).
        assert_eq!(
            solutions_format(Some("text/csv"), Some("n3")),
            Some(SolutionsFormat::Csv)
        );
        assert_eq!(solutions_format(None, Some("n3")), Some(Json));
        assert_eq!(graph_format(None, Some("n3")), Some(GraphFormat::Turtle));
        assert_eq!(
            graph_format(None, Some("json-ld")),
            Some(GraphFormat::JsonLd)
        );
        assert_eq!(
            graph_format(Some("application/n-triples"), Some("bogus")),
            Some(GraphFormat::NTriples)
        );
        assert_eq!(
            graph_format(Some("application/rdf+xml;q=0.5, text/turtle"), None),
            Some(GraphFormat::Turtle)
        );
        assert_eq!(graph_format(None, Some("json")), Some(GraphFormat::JsonLd));
        assert_eq!(
            graph_format(
                Some("application/ld+json;profile=\"http://www.w3.org/ns/json-ld#compacted\""),
                None
            ),
            Some(GraphFormat::JsonLdCompacted)
        );
        assert_eq!(
            graph_format(
                Some("text/turtle;q=0.5, application/ld+json; profile=\"http://www.w3.org/ns/json-ld#flattened http://www.w3.org/ns/json-ld#compacted\""),
                None
            ),
            Some(GraphFormat::JsonLdCompacted)
        );
        assert_eq!(
            graph_format(
                Some("application/ld+json;profile=\"http://www.w3.org/ns/json-ld#expanded\""),
                None
            ),
            Some(GraphFormat::JsonLd)
        );
        assert_eq!(
            graph_format(None, Some("jsonld-compacted")),
            Some(GraphFormat::JsonLdCompacted)
        );
        assert_eq!(
            graph_format(Some("application/n-triples"), None),
            Some(GraphFormat::NTriples)
        );
    }

    #[test]
    fn accept_encoding_with_q_values() {
        assert_eq!(encoding(None), Encoding::Identity);
        assert_eq!(encoding(Some("gzip")), Encoding::Gzip);
        assert_eq!(encoding(Some("deflate, gzip, br, zstd")), Encoding::Zstd);
        assert_eq!(encoding(Some("gzip;q=0.5, br;q=0.8")), Encoding::Brotli);
        assert_eq!(encoding(Some("*;q=0.1, zstd;q=0")), Encoding::Gzip);
        assert_eq!(encoding(Some("identity")), Encoding::Identity);
        assert_eq!(encoding(Some("compress")), Encoding::Identity);
    }
}
