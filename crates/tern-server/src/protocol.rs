//! The SPARQL 1.1 Protocol's query operation: which parameters a GET or a
//! POST carries, and what is wrong with a request that breaks its rules.

use crate::error::RequestError;
use axum::http::{header, HeaderMap, Method};
use oxrdf::NamedNode;
use std::time::Duration;

/// The longest `timeout` a request may ask for (a year): it can only lower
/// the server's timeout, and far larger numbers do not fit a `Duration`.
const LONGEST_TIMEOUT_SECONDS: f64 = 365.0 * 24.0 * 3600.0;

/// A query request, whatever way it came.
#[derive(Debug, Default)]
pub struct QueryParams {
    pub query: Option<String>,
    pub default_graphs: Vec<NamedNode>,
    pub named_graphs: Vec<NamedNode>,
    /// `format=` for clients that cannot set `Accept` (browsers).
    pub format: Option<String>,
    /// `timeout=` seconds; lowers the server's timeout.
    pub timeout: Option<Duration>,
    /// `explain=true`: run the query, return its plan profile instead of results.
    pub explain: bool,
    /// `tern-fault-after=N` (test builds of the server only).
    pub fault_after: Option<u64>,
    /// `quantum=50ms`: answer with one page and a continuation token.
    pub quantum: Option<String>,
    /// `next=TOKEN`: the next page of a paged query.
    pub next: Option<String>,
    /// `page-rows=N`: a page also ends once it holds N rows, exactly: rows
    /// of a batch past them wait, with the parked query, for the next page
    /// (whose token then resumes on this server only).
    pub page_rows: Option<u64>,
    /// `compression=fixed`: the fast level throughout, instead of one that
    /// rises while the client is the bottleneck (`adaptive`, the default).
    pub fixed_compression: bool,
    /// The base IRI a resumed query started with (from its token).
    pub base_iri: Option<String>,
    /// The snapshot a resumed query reads (from its token).
    pub snapshot: Option<tern_index::Snapshot>,
    /// An update (`update=` or an `application/sparql-update` body).
    pub update: Option<String>,
    /// Read the store's default graph alone (the Graph Store Protocol's
    /// `?default`).
    pub default_graph_only: bool,
    /// `using-graph-uri` and `using-named-graph-uri` of an update.
    pub using_graphs: Vec<NamedNode>,
    pub using_named_graphs: Vec<NamedNode>,
    /// `inference=none|rdfs|owl-rl`: the entailment regime of this query.
    pub inference: Option<tern_engine::Inference>,
    /// `sameas=all|canonical`: how owl:sameAs synonyms are answered.
    pub same_as: Option<tern_engine::SameAsAnswers>,
}

/// The name/value pairs of a query string or form body, percent-decoded.
/// A pair that does not decode to UTF-8 (`%FF`) is refused rather than
/// patched with replacement characters: the query would not be what the
/// client sent.
pub(crate) fn decode_pairs(encoded: &[u8]) -> Result<Vec<(String, String)>, RequestError> {
    let decode = |part: &[u8]| -> Result<String, RequestError> {
        let spaced: Vec<u8> = part
            .iter()
            .map(|&b| if b == b'+' { b' ' } else { b })
            .collect();
        let bytes: Vec<u8> = percent_encoding::percent_decode(&spaced).collect();
        String::from_utf8(bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            RequestError::BadRequest(format!(
                "a URL-encoded parameter is not UTF-8 once decoded (byte {at} of {:?})",
                String::from_utf8_lossy(&part[..part.len().min(40)])
            ))
        })
    };
    encoded
        .split(|&b| b == b'&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = match pair.iter().position(|&b| b == b'=') {
                Some(i) => (&pair[..i], &pair[i + 1..]),
                None => (pair, &b""[..]),
            };
            Ok((decode(key)?, decode(value)?))
        })
        .collect()
}

/// Collects protocol parameters from URL-encoded pairs (a query string or a
/// form body).
fn add_pairs(params: &mut QueryParams, encoded: &[u8]) -> Result<(), RequestError> {
    for (key, value) in decode_pairs(encoded)? {
        match key.as_str() {
            "query" => {
                if params.query.is_some() {
                    return Err(RequestError::BadRequest(
                        "more than one query parameter".into(),
                    ));
                }
                params.query = Some(value);
            }
            "update" => {
                if params.update.is_some() {
                    return Err(RequestError::BadRequest(
                        "more than one update parameter".into(),
                    ));
                }
                params.update = Some(value);
            }
            "using-graph-uri" => params.using_graphs.push(graph_iri(&value)?),
            "using-named-graph-uri" => params.using_named_graphs.push(graph_iri(&value)?),
            "default-graph-uri" => params.default_graphs.push(graph_iri(&value)?),
            "named-graph-uri" => params.named_graphs.push(graph_iri(&value)?),
            // A `+` in a media type arrives as a space after form decoding.
            "format" => params.format = Some(value.replace(' ', "+")),
            "timeout" => {
                let secs: f64 = value
                    .trim()
                    .parse()
                    .ok()
                    .filter(|s: &f64| *s > 0.0 && *s <= LONGEST_TIMEOUT_SECONDS)
                    .ok_or_else(|| {
                        RequestError::BadRequest(format!(
                            "timeout must be a positive number of seconds up to \
                             {LONGEST_TIMEOUT_SECONDS}, not {value:?}"
                        ))
                    })?;
                params.timeout = Some(Duration::from_secs_f64(secs));
            }
            "inference" => {
                params.inference = Some(value.parse().map_err(RequestError::BadRequest)?)
            }
            "sameas" => params.same_as = Some(value.parse().map_err(RequestError::BadRequest)?),
            "quantum" => params.quantum = Some(value),
            "compression" => {
                params.fixed_compression = match value.trim() {
                    "fixed" => true,
                    "adaptive" => false,
                    other => {
                        return Err(RequestError::BadRequest(format!(
                            "compression is fixed or adaptive, not {other:?}"
                        )))
                    }
                }
            }
            "page-rows" => {
                params.page_rows = Some(
                    value
                        .trim()
                        .parse()
                        .ok()
                        .filter(|&n: &u64| n > 0)
                        .ok_or_else(|| {
                            RequestError::BadRequest(format!(
                                "page-rows must be a positive number of rows, not {value:?}"
                            ))
                        })?,
                )
            }
            "next" => {
                if params.next.is_some() {
                    return Err(RequestError::BadRequest(
                        "more than one next parameter".into(),
                    ));
                }
                params.next = Some(value);
            }
            "explain" => params.explain = matches!(value.as_str(), "true" | "1" | "yes" | ""),
            "tern-fault-after" => {
                params.fault_after = Some(value.parse().map_err(|_| {
                    RequestError::BadRequest("tern-fault-after must be a row count".into())
                })?)
            }
            _ => {} // Unknown parameters are ignored, as most endpoints do.
        }
    }
    Ok(())
}

fn graph_iri(value: &str) -> Result<NamedNode, RequestError> {
    NamedNode::new(value)
        .map_err(|e| RequestError::BadRequest(format!("invalid graph IRI <{value}>: {e}")))
}

/// The media type of a request body, lower-cased, without parameters; and
/// whether its charset (if any) is UTF-8.
fn content_type(headers: &HeaderMap) -> Option<(String, bool)> {
    let value = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    let mut parts = value.split(';');
    let media = parts.next()?.trim().to_ascii_lowercase();
    let utf8 = parts.all(|p| match p.trim().split_once('=') {
        Some((k, v)) if k.trim().eq_ignore_ascii_case("charset") => {
            let v = v.trim().trim_matches('"');
            v.eq_ignore_ascii_case("utf-8") || v.eq_ignore_ascii_case("utf8")
        }
        _ => true,
    });
    Some((media, utf8))
}

/// Reads a request into protocol parameters. `body` is the already-read
/// body of a POST (bounded by the caller).
pub fn parse_request(
    method: &Method,
    uri_query: Option<&str>,
    headers: &HeaderMap,
    body: &[u8],
    max_query_bytes: usize,
) -> Result<QueryParams, RequestError> {
    let mut params = QueryParams::default();
    if let Some(q) = uri_query {
        add_pairs(&mut params, q.as_bytes())?;
    }
    match *method {
        Method::GET | Method::HEAD => {}
        Method::POST => match content_type(headers) {
            Some((media, utf8)) if media == "application/x-www-form-urlencoded" => {
                if !utf8 {
                    return Err(RequestError::UnsupportedMediaType(
                        "form bodies must be UTF-8".into(),
                    ));
                }
                add_pairs(&mut params, body)?;
            }
            Some((media, utf8)) if media == "application/sparql-query" => {
                if !utf8 {
                    return Err(RequestError::UnsupportedMediaType(
                        "application/sparql-query bodies must be UTF-8".into(),
                    ));
                }
                if params.query.is_some() {
                    return Err(RequestError::BadRequest(
                        "a query both in the URL and in the body".into(),
                    ));
                }
                let text = std::str::from_utf8(body).map_err(|e| {
                    RequestError::BadRequest(format!("the query is not valid UTF-8: {e}"))
                })?;
                params.query = Some(text.to_owned());
            }
            Some((media, utf8)) if media == "application/sparql-update" => {
                if !utf8 {
                    return Err(RequestError::UnsupportedMediaType(
                        "application/sparql-update bodies must be UTF-8".into(),
                    ));
                }
                let text = std::str::from_utf8(body).map_err(|e| {
                    RequestError::BadRequest(format!("the update is not valid UTF-8: {e}"))
                })?;
                params.update = Some(text.to_owned());
            }
            Some((media, _)) => {
                return Err(RequestError::UnsupportedMediaType(format!(
                    "POST bodies must be application/x-www-form-urlencoded, \
                     application/sparql-query or application/sparql-update, not {media}"
                )))
            }
            None => {
                return Err(RequestError::UnsupportedMediaType(
                    "a POST needs a Content-Type: application/x-www-form-urlencoded or \
                     application/sparql-query"
                        .into(),
                ))
            }
        },
        _ => {
            return Err(RequestError::MethodNotAllowed(format!(
                "{method} is not a SPARQL query method (use GET or POST)"
            )))
        }
    }
    if params.update.is_some() {
        if params.query.is_some() {
            return Err(RequestError::BadRequest(
                "a request carries a query or an update, not both".into(),
            ));
        }
        if *method != Method::POST {
            return Err(RequestError::BadRequest(
                "updates must be sent with POST (SPARQL 1.1 Protocol, 2.2)".into(),
            ));
        }
    }
    if let Some(query) = &params.query {
        if query.len() > max_query_bytes {
            return Err(RequestError::TooLarge {
                len: query.len(),
                max: max_query_bytes,
            });
        }
    }
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn form_headers(ct: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_str(ct).unwrap());
        h
    }

    #[test]
    fn get_and_post_forms() {
        let p = parse_request(
            &Method::GET,
            Some("query=ASK%20%7B%7D&default-graph-uri=http%3A%2F%2Fe%2Fg&format=application/sparql-results+json"),
            &HeaderMap::new(),
            b"",
            100,
        )
        .unwrap();
        assert_eq!(p.query.as_deref(), Some("ASK {}"));
        assert_eq!(p.default_graphs[0].as_str(), "http://e/g");
        assert_eq!(p.format.as_deref(), Some("application/sparql-results+json"));

        let p = parse_request(
            &Method::POST,
            Some("named-graph-uri=http%3A%2F%2Fe%2Fn"),
            &form_headers("application/x-www-form-urlencoded"),
            b"query=SELECT+*+%7B%7D&timeout=0.5",
            100,
        )
        .unwrap();
        assert_eq!(p.query.as_deref(), Some("SELECT * {}"));
        assert_eq!(p.named_graphs.len(), 1);
        assert_eq!(p.timeout, Some(Duration::from_millis(500)));
    }

    #[test]
    fn protocol_violations() {
        let status = |r: Result<QueryParams, RequestError>| r.unwrap_err().status().as_u16();
        let get = |q: &str| parse_request(&Method::GET, Some(q), &HeaderMap::new(), b"", 10);
        assert_eq!(status(get("query=ASK%7B%7D&query=ASK%7B%7D")), 400);
        assert_eq!(status(get("query=SELECT%20*%20WHERE%20%7B%7D")), 413);
        assert_eq!(
            status(get("query=ASK%7B%7D&default-graph-uri=not%20an%20iri")),
            400
        );
        let post = |ct: Option<&str>, body: &[u8]| {
            let h = ct.map(form_headers).unwrap_or_default();
            parse_request(&Method::POST, None, &h, body, 100)
        };
        assert_eq!(status(post(Some("text/plain"), b"ASK {}")), 415);
        assert_eq!(status(post(None, b"query=ASK%20%7B%7D")), 415);
        assert_eq!(
            status(post(
                Some("application/sparql-query; charset=UTF-16"),
                b"A\0S\0"
            )),
            415
        );
        assert_eq!(
            status(parse_request(
                &Method::PUT,
                None,
                &HeaderMap::new(),
                b"",
                10
            )),
            405
        );
    }
}
