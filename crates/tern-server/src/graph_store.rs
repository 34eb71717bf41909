//! The SPARQL 1.1 Graph Store HTTP Protocol at `/store`: GET, HEAD, PUT,
//! POST and DELETE on one graph, named by `?graph=IRI` (indirect), `?default`,
//! or the request's own URL under `/store/` (direct). GET streams the graph
//! through the query pipeline (every graph format, compression, bounded
//! memory); writes need the write credential and stream their bodies into
//! one transaction; POST to `/store` alone creates a new graph and answers
//! with its IRI in `Location`.

use crate::error::RequestError;
use crate::protocol::QueryParams;
use crate::server::{header_str, run_query, AppState};
use crate::write_pool::run_write;
use crate::{multipart, negotiate, update};
use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use oxrdf::{GraphName, NamedNode};
use oxrdfio::RdfFormat;
use std::io::Write;
use std::sync::Arc;
use std::time::Instant;
use tern_engine::{graph_exists, GraphWrite};

/// Which graph a request is about.
enum Target {
    Graph(GraphName),
    /// `/store` with neither `graph` nor `default`: the whole store (GET),
    /// or a graph to create (POST).
    Store,
}

pub async fn handle(
    State(state): State<Arc<AppState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let received = Instant::now();
    let response = match serve(&state, &method, &uri, &headers, body, received).await {
        Ok(response) => response,
        Err(error) => error.into_response(),
    };
    crate::server::cors(&headers, response)
}

async fn serve(
    state: &Arc<AppState>,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: Body,
    received: Instant,
) -> Result<Response, RequestError> {
    let base = base_url(headers);
    let target = target(uri, &base)?;
    match *method {
        Method::GET | Method::HEAD => read(state, method, target, headers, uri, received).await,
        Method::PUT | Method::POST => {
            update::authorize(state, headers)?;
            let content_type = header_str(headers, header::CONTENT_TYPE).unwrap_or("");
            let multipart = content_type
                .to_ascii_lowercase()
                .starts_with("multipart/form-data");
            let format = if multipart {
                RdfFormat::NTriples // each part says its own
            } else {
                body_format(headers)?
            };
            let (graph, created_iri) = match target {
                Target::Graph(graph) => (graph, None),
                Target::Store if *method == Method::POST => {
                    let iri = format!("{base}/store/{:016x}", rand::random::<u64>());
                    let node = NamedNode::new(iri.as_str())
                        .map_err(|e| RequestError::Internal(e.to_string()))?;
                    (node.into(), Some(iri))
                }
                Target::Store => {
                    return Err(RequestError::BadRequest(
                        "PUT needs a graph: ?graph=IRI or ?default".into(),
                    ))
                }
            };
            let replace = *method == Method::PUT;
            let base_iri = match &graph {
                GraphName::NamedNode(n) => n.as_str().to_owned(),
                _ => format!("{base}/store"),
            };
            let write = if multipart {
                write_multipart(state, graph, body, content_type, base_iri, replace).await?
            } else {
                write(state, graph, body, format, base_iri, replace).await?
            };
            let mut response = written(&write, received);
            if let Some(iri) = created_iri {
                *response.status_mut() = StatusCode::CREATED;
                if let Ok(value) = HeaderValue::from_str(&iri) {
                    response.headers_mut().insert(header::LOCATION, value);
                }
            }
            Ok(response)
        }
        Method::DELETE => {
            update::authorize(state, headers)?;
            let Target::Graph(graph) = target else {
                return Err(RequestError::BadRequest(
                    "DELETE needs a graph: ?graph=IRI or ?default".into(),
                ));
            };
            let engine = state.engine.clone();
            let shown = graph.to_string();
            let deleted = blocking(state, move || engine.delete_graph(&graph)).await?;
            match deleted {
                Some(write) => Ok(written(&write, received)),
                None => Err(RequestError::NotFound(format!(
                    "no graph {shown} in the store"
                ))),
            }
        }
        _ => Err(RequestError::MethodNotAllowed(format!(
            "{method} is not a Graph Store Protocol method (GET, HEAD, PUT, POST, DELETE)"
        ))),
    }
}

/// GET and HEAD: the graph (or, for `/store` alone, every quad) through
/// the query pipeline.
async fn read(
    state: &Arc<AppState>,
    method: &Method,
    target: Target,
    headers: &HeaderMap,
    uri: &Uri,
    received: Instant,
) -> Result<Response, RequestError> {
    let accept = header_str(headers, header::ACCEPT);
    let mut params = QueryParams::default();
    let query = match &target {
        Target::Graph(GraphName::NamedNode(n)) => {
            if !graph_exists(&state.engine.snapshot(), &GraphName::NamedNode(n.clone()))? {
                return Err(RequestError::NotFound(format!("no graph {n} in the store")));
            }
            format!("CONSTRUCT {{ ?s ?p ?o }} WHERE {{ GRAPH {n} {{ ?s ?p ?o }} }}")
        }
        Target::Graph(_) => {
            params.default_graph_only = true;
            "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }".to_owned()
        }
        Target::Store => {
            "CONSTRUCT { ?s ?p ?o } WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }"
                .to_owned()
        }
    };
    let format = negotiate::graph_format(accept, None).ok_or_else(|| {
        RequestError::NotAcceptable(
            "graphs come as text/turtle, application/n-triples, application/n-quads, \
             application/rdf+xml or application/ld+json"
                .into(),
        )
    })?;
    if *method == Method::HEAD {
        let mut response = StatusCode::OK.into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(format.media_type()),
        );
        return Ok(response);
    }
    let encoding = negotiate::encoding(header_str(headers, header::ACCEPT_ENCODING));
    let endpoint = format!("{}{}", base_url(headers), uri.path());
    run_query(
        state,
        None,
        params,
        query,
        None,
        Some(format),
        encoding,
        headers,
        endpoint,
        None,
        received,
    )
    .await
}

/// The graph a request names.
fn target(uri: &Uri, base: &str) -> Result<Target, RequestError> {
    let mut graph = None;
    let mut default = false;
    for pair in uri
        .query()
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "graph" => {
                let value = percent_encoding::percent_decode_str(value)
                    .decode_utf8()
                    .map_err(|_| RequestError::BadRequest("the graph IRI is not UTF-8".into()))?;
                let iri = NamedNode::new(value.as_ref()).map_err(|e| {
                    RequestError::BadRequest(format!("invalid graph IRI <{value}>: {e}"))
                })?;
                graph = Some(iri);
            }
            "default" => default = true,
            _ => {}
        }
    }
    let direct = uri
        .path()
        .strip_prefix("/store/")
        .filter(|rest| !rest.is_empty());
    match (graph, default, direct) {
        (Some(_), true, _) => Err(RequestError::BadRequest(
            "name a graph (graph=IRI) or the default graph (default), not both".into(),
        )),
        (Some(iri), false, None) => Ok(Target::Graph(iri.into())),
        (None, true, None) => Ok(Target::Graph(GraphName::DefaultGraph)),
        (None, false, Some(rest)) => {
            let iri = format!("{base}/store/{rest}");
            let node = NamedNode::new(iri.as_str())
                .map_err(|e| RequestError::BadRequest(format!("invalid graph IRI <{iri}>: {e}")))?;
            Ok(Target::Graph(node.into()))
        }
        (None, false, None) => Ok(Target::Store),
        _ => Err(RequestError::BadRequest(
            "a graph named both by the URL path and by a parameter".into(),
        )),
    }
}

/// `http://host` of the request.
fn base_url(headers: &HeaderMap) -> String {
    let host = header_str(headers, header::HOST)
        .filter(|h| {
            h.bytes()
                .all(|b| b.is_ascii_graphic() && !b"<>\"{}|^`\\/".contains(&b))
        })
        .unwrap_or("localhost");
    format!("http://{host}")
}

/// The RDF syntax of a request body, from its Content-Type.
fn body_format(headers: &HeaderMap) -> Result<RdfFormat, RequestError> {
    media_format(header_str(headers, header::CONTENT_TYPE))
}

/// The RDF syntax of a Content-Type (graph formats only).
fn media_format(content_type: Option<&str>) -> Result<RdfFormat, RequestError> {
    let media = content_type
        .and_then(|v| v.split(';').next())
        .map(|m| m.trim().to_ascii_lowercase())
        .ok_or_else(|| {
            RequestError::UnsupportedMediaType(
                "a graph body needs a Content-Type (text/turtle, application/n-triples, \
                 application/rdf+xml, application/ld+json)"
                    .into(),
            )
        })?;
    let format = match media.as_str() {
        // N-Triples is a subset of Turtle; text/plain is what curl sends.
        "text/plain" => Some(RdfFormat::NTriples),
        other => RdfFormat::from_media_type(other),
    };
    format.filter(|f| !f.supports_datasets()).ok_or_else(|| {
        RequestError::UnsupportedMediaType(format!(
            "a graph body is text/turtle, application/n-triples, application/rdf+xml or \
                 application/ld+json, not {media}"
        ))
    })
}

/// Writes a body into a graph. The body is first spooled to a temporary
/// file as it arrives (bounded memory, at most `--max-update-bytes`), so a
/// slow client never holds the store's write lock: the transaction starts
/// once the whole body is there, and parses it from the file.
async fn write(
    state: &Arc<AppState>,
    graph: GraphName,
    mut body: Body,
    format: RdfFormat,
    base_iri: String,
    replace: bool,
) -> Result<GraphWrite, RequestError> {
    let spool = Spool::new();
    let mut file = std::io::BufWriter::new(spool.create()?);
    let limit = state.config.max_update_bytes;
    let mut received = 0usize;
    loop {
        let frame = tokio::time::timeout(state.config.body_timeout, body.frame())
            .await
            .map_err(|_| RequestError::SlowClient("the request body stopped arriving".into()))?;
        let Some(frame) = frame else { break };
        let frame = frame
            .map_err(|e| RequestError::BadRequest(format!("cannot read the request body: {e}")))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        received += data.len();
        if received > limit {
            return Err(RequestError::TooLarge {
                len: received,
                max: limit,
            });
        }
        file.write_all(&data).map_err(|e| spool.failed(e))?;
    }
    file.flush().map_err(|e| spool.failed(e))?;
    drop(file);
    let engine = state.engine.clone();
    blocking(state, move || {
        let reader = std::io::BufReader::with_capacity(1 << 20, spool.open()?);
        let written = engine.write_graph(&graph, vec![(format, reader)], Some(&base_iri), replace);
        drop(spool);
        written
    })
    .await
}

/// A temporary file holding a request body, removed when dropped.
struct Spool {
    path: std::path::PathBuf,
}

impl Spool {
    fn new() -> Spool {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("tern-graph-body-{}-{n}", std::process::id());
        Spool {
            path: std::env::temp_dir().join(name),
        }
    }

    fn create(&self) -> Result<std::fs::File, RequestError> {
        std::fs::File::create(&self.path).map_err(|e| self.failed(e))
    }

    fn open(&self) -> Result<std::fs::File, tern_engine::EngineError> {
        std::fs::File::open(&self.path).map_err(|e| {
            tern_engine::EngineError::Update(format!("cannot read the spooled body: {e}"))
        })
    }

    fn failed(&self, e: std::io::Error) -> RequestError {
        RequestError::Internal(format!(
            "cannot spool the body to {}: {e}",
            self.path.display()
        ))
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A multipart body: read whole (within the update size limit), split, and
/// each part parsed by its own Content-Type, all in one transaction.
async fn write_multipart(
    state: &Arc<AppState>,
    graph: GraphName,
    body: Body,
    content_type: &str,
    base_iri: String,
    replace: bool,
) -> Result<GraphWrite, RequestError> {
    let boundary = multipart::boundary(content_type).ok_or_else(|| {
        RequestError::BadRequest("a multipart/form-data body needs a boundary parameter".into())
    })?;
    let limit = state.config.max_update_bytes;
    let read = axum::body::to_bytes(body, limit);
    let bytes = match tokio::time::timeout(state.config.body_timeout, read).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(_)) => {
            return Err(RequestError::TooLarge {
                len: limit,
                max: limit,
            })
        }
        Err(_) => {
            return Err(RequestError::SlowClient(
                "the request body did not arrive in time".into(),
            ))
        }
    };
    let mut documents = Vec::new();
    for part in multipart::parts(&bytes, &boundary)? {
        let format = media_format(part.content_type.as_deref())?;
        documents.push((format, part.body.to_vec()));
    }
    let engine = state.engine.clone();
    blocking(state, move || {
        let documents = documents
            .into_iter()
            .map(|(f, b)| (f, std::io::Cursor::new(b)))
            .collect();
        engine.write_graph(&graph, documents, Some(&base_iri), replace)
    })
    .await
}

/// Runs a store write on a write thread (see `write_pool`).
async fn blocking<T: Send + 'static>(
    state: &AppState,
    work: impl FnOnce() -> Result<T, tern_engine::EngineError> + Send + 'static,
) -> Result<T, RequestError> {
    Ok(run_write(state, work).await??)
}

/// The answer to a write: 201 when it made the graph, else 204.
fn written(write: &GraphWrite, received: Instant) -> Response {
    tracing::info!(
        target: "tern::access",
        status = if write.created { 201 } else { 204 },
        outcome = "graph-store",
        total_ms = crate::metrics::millis(received.elapsed()),
        version = write.version,
        inserted = write.inserted,
        deleted = write.deleted,
        "graph store write"
    );
    let status = if write.created {
        StatusCode::CREATED
    } else {
        StatusCode::NO_CONTENT
    };
    status.into_response()
}
