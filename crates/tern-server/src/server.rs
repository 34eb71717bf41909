//! HTTP routes: `/sparql` (the SPARQL 1.1 Protocol's query operation),
//! `/metrics`, and a small query page at `/`.

use crate::body::{OnComplete, ResultBody};
use crate::clients::{ClientSlot, ClientSlots};
use crate::config::ServerConfig;
use crate::encoding::Encoding;
use crate::error::RequestError;
use crate::listen::Peer;
use crate::metrics::{Metrics, QueryRecord};
use crate::negotiate;
use crate::paging::{parse_quantum, PageRequest, PageStats, Paging};
use crate::producer::{Head, QueryJob, QueryTask};
use crate::protocol::{parse_request, QueryParams};
use crate::scheduler::Scheduler;
use crate::service;
use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::Extension;
use axum::Router;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tern_engine::ContinuationToken;
use tern_engine::{CancelFlag, Engine, QueryRequest};
use tokio::sync::oneshot;

pub struct AppState {
    pub engine: Engine,
    pub scheduler: Scheduler,
    pub clients: Arc<ClientSlots>,
    pub paging: Arc<Paging>,
    pub config: ServerConfig,
    pub metrics: Metrics,
    /// Places for updates and graph writes (see `write_pool::WRITE_PLACES`).
    pub writers: Arc<tokio::sync::Semaphore>,
    pub write_pool: crate::write_pool::WritePool,
    /// When the server started (for `/status`).
    pub started: std::time::Instant,
    /// The queries in the server now (for `/status` and cancelling).
    pub live_queries: crate::live_queries::LiveQueries,
}

pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/sparql", any(sparql))
        .route("/sparql/", any(sparql))
        .route("/metrics", get(metrics))
        .route("/compact", axum::routing::post(compact))
        .route("/store", any(crate::graph_store::handle))
        .route("/store/{*graph}", any(crate::graph_store::handle))
        .route("/", get(crate::workbench::index))
        .route("/ui/{file}", get(crate::workbench::ui_file))
        .route("/prefixes", get(crate::workbench::prefixes))
        .route("/examples", get(crate::workbench::examples))
        .route("/complete", get(crate::complete::complete))
        .route("/status", get(crate::status::status))
        .route(
            "/queries/{id}/cancel",
            axum::routing::post(crate::live_queries::cancel),
        )
        .with_state(state)
}

/// Response headers that browsers' scripts may read.
const EXPOSED: &str = "Tern-Parse-Ms, Tern-Plan-Ms, Tern-Queue-Ms, Tern-Rows, Tern-Execute-Ms, \
                       Tern-Total-Ms, Tern-Error, Tern-Next, Tern-Rows-Before, Tern-Token-Bytes, \
                       Tern-Suspend-Us, Tern-Resume-Us, Tern-Resumed-From, \
                       Content-Encoding";

/// Adds the CORS headers to the answer of a cross-origin request (one that
/// has an `Origin` header, as browsers send); other clients are spared
/// them (a third of a small update's answer, parsed by every client).
/// Whether a request to the endpoint is a Graph Store request: its URL
/// names a graph (`graph=` or `default`) and neither it nor its body is a
/// query or an update.
fn names_a_graph(uri: &Uri, headers: &HeaderMap) -> bool {
    let keys: Vec<&str> = uri
        .query()
        .unwrap_or("")
        .split('&')
        .map(|pair| pair.split_once('=').map_or(pair, |(key, _)| key))
        .collect();
    let sparql_body = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .is_some_and(|t| {
            matches!(
                t.as_str(),
                "application/x-www-form-urlencoded"
                    | "application/sparql-query"
                    | "application/sparql-update"
            )
        });
    keys.iter().any(|k| matches!(*k, "graph" | "default"))
        && !keys
            .iter()
            .any(|k| matches!(*k, "query" | "update" | "next"))
        && !sparql_body
}

pub(crate) fn cors(request: &HeaderMap, response: Response) -> Response {
    if request.contains_key(header::ORIGIN) {
        with_cors(response)
    } else {
        response
    }
}

fn with_cors(mut response: Response) -> Response {
    let h = response.headers_mut();
    h.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    h.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(EXPOSED),
    );
    response
}

pub(crate) fn header_str(headers: &HeaderMap, name: HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Whether the client said it reads trailers (`TE: trailers`).
fn accepts_trailers(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::TE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| {
            t.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("trailers")
        })
}

async fn sparql(
    State(state): State<Arc<AppState>>,
    peer: Option<Extension<Peer>>,
    method: Method,
    version: axum::http::Version,
    uri: Uri,
    mut headers: HeaderMap,
    body: Body,
) -> Response {
    let peer = peer.map(|Extension(Peer(addr))| addr.ip());
    if version == axum::http::Version::HTTP_2 {
        // Every HTTP/2 client reads trailers (they are a HEADERS frame, not
        // a chunked-encoding feature): the error and the figures go there.
        headers.insert(header::TE, HeaderValue::from_static("trailers"));
    }
    let received = Instant::now();
    if method == Method::OPTIONS {
        return preflight();
    }
    if names_a_graph(&uri, &headers) {
        // Graph Store clients given the endpoint's address (`?graph=IRI`,
        // `?default`): served as the Graph Store, not with the service
        // description, which they would take for the graph's content.
        // Answered as `/store` answers (CORS included).
        return crate::graph_store::handle(State(state), method, uri, headers, body).await;
    }
    let response = match handle(&state, peer, &method, &uri, &headers, body, received).await {
        Ok(response) => response,
        Err(error) => {
            state.metrics.record(&QueryRecord {
                outcome: error.outcome(),
                latency: received.elapsed(),
                format: "none",
                encoding: "identity",
                wire_bytes: 0,
                payload_bytes: 0,
                rows: 0,
            });
            tracing::info!(
                target: "tern::access",
                client = peer.map_or_else(String::new, |ip| ip.to_string()),
                method = %method,
                status = error.status().as_u16(),
                outcome = error.outcome(),
                total_ms = crate::metrics::millis(received.elapsed()),
                error = %error,
                "query"
            );
            error.into_response()
        }
    };
    cors(&headers, response)
}

fn preflight() -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let h = response.headers_mut();
    h.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, OPTIONS"),
    );
    h.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("Content-Type, Accept, Accept-Encoding, TE, Tern-Quantum"),
    );
    h.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("86400"),
    );
    with_cors(response)
}

/// Whether reading a body failed because it passed the size limit (not
/// because it was malformed, e.g. a bad chunk size).
fn over_limit(error: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if e.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = e.source();
    }
    false
}

async fn handle(
    state: &Arc<AppState>,
    peer: Option<std::net::IpAddr>,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: Body,
    received: Instant,
) -> Result<Response, RequestError> {
    let max = state.config.max_query_bytes;
    // A server that takes updates reads longer bodies (checked again once
    // it is known whether the body is a query or an update).
    let body_max = match state.config.update_token {
        Some(_) => max.max(state.config.max_update_bytes),
        None => max,
    };
    let body = if *method == Method::POST {
        // Form bodies percent-encode the query: allow for that, then check
        // the decoded query's length.
        let limit = body_max.saturating_mul(3).saturating_add(64 << 10);
        let read = axum::body::to_bytes(body, limit);
        match tokio::time::timeout(state.config.body_timeout, read).await {
            Ok(Ok(bytes)) => bytes,
            Ok(Err(e)) if over_limit(&e) => {
                return Err(RequestError::TooLarge {
                    len: body_max.saturating_mul(3),
                    max: body_max,
                })
            }
            Ok(Err(e)) => {
                return Err(RequestError::BadRequest(format!(
                    "cannot read the request body: {e}"
                )))
            }
            Err(_) => {
                return Err(RequestError::SlowClient(format!(
                    "the request body did not arrive within {} s",
                    state.config.body_timeout.as_secs_f64()
                )))
            }
        }
    } else {
        Default::default()
    };
    let mut params = parse_request(method, uri.query(), headers, &body, max)?;
    if let Some(update) = params.update.take() {
        let base_iri = endpoint_iri(headers, uri);
        // Counted with the client's queries while it runs.
        let slot = peer.map(|ip| state.clients.take(ip)).transpose()?;
        return crate::update::handle(state, slot, headers, params, update, base_iri, received)
            .await;
    }
    let accept = header_str(headers, header::ACCEPT);
    // A paged request: one quantum of work, a page and a token.
    let quantum = params
        .quantum
        .as_deref()
        .or(header_str(headers, HeaderName::from_static("tern-quantum")))
        .map(parse_quantum)
        .transpose()?;
    let mut resume = None;
    if let Some(token) = params.next.take() {
        if params.query.is_some() {
            return Err(RequestError::BadRequest(
                "send either a query or a continuation token (next), not both".into(),
            ));
        }
        let opening = Instant::now();
        let (resumption, snapshot) = state.paging.open(&token)?;
        let request = Paging::request_of(&resumption)?;
        let opened_in = opening.elapsed();
        params.query = Some(resumption.query.clone());
        params.default_graphs = request.default_graphs.unwrap_or_default();
        params.named_graphs = request.named_graphs.unwrap_or_default();
        params.base_iri = request.base_iri;
        params.snapshot = Some(snapshot);
        resume = Some((resumption, opened_in));
    }
    let page = (quantum.is_some() || resume.is_some() || params.page_rows.is_some()).then(|| {
        let quantum = quantum
            .or(state.config.quantum)
            .unwrap_or(Duration::from_millis(50));
        (quantum, resume)
    });
    let Some(text) = params.query.clone() else {
        if *method == Method::POST {
            return Err(RequestError::BadRequest("no query parameter".into()));
        }
        let updates = state.config.update_token.is_some();
        return service_description(headers, uri, accept, params.format.as_deref(), updates);
    };
    let solutions_format = negotiate::solutions_format(accept, params.format.as_deref());
    let graph_format = negotiate::graph_format(accept, params.format.as_deref());
    if solutions_format.is_none() && graph_format.is_none() && !params.explain {
        return Err(RequestError::NotAcceptable(format!(
            "cannot produce {}; results come as application/sparql-results+json, \
             application/sparql-results+xml, text/csv, text/tab-separated-values, \
             application/vnd.apache.arrow.stream (SELECT, ASK) or text/turtle, \
             application/n-triples, application/n-quads, application/rdf+xml, \
             application/ld+json (CONSTRUCT, DESCRIBE)",
            params.format.as_deref().or(accept).unwrap_or("")
        )));
    }
    let encoding = negotiate::encoding(header_str(headers, header::ACCEPT_ENCODING));
    let endpoint = params
        .base_iri
        .clone()
        .unwrap_or_else(|| endpoint_iri(headers, uri));
    // Held by the query's task until it ends.
    let slot = peer.map(|ip| state.clients.take(ip)).transpose()?;
    run_query(
        state,
        slot,
        params,
        text,
        solutions_format,
        graph_format,
        encoding,
        headers,
        endpoint,
        page,
        received,
    )
    .await
}

#[allow(clippy::too_many_arguments)]
pub(crate) async fn run_query(
    state: &Arc<AppState>,
    slot: Option<ClientSlot>,
    params: QueryParams,
    text: String,
    solutions_format: Option<tern_export::SolutionsFormat>,
    graph_format: Option<tern_export::GraphFormat>,
    encoding: Encoding,
    headers: &HeaderMap,
    endpoint: String,
    page: Option<(Duration, Option<(ContinuationToken, Duration)>)>,
    received: Instant,
) -> Result<Response, RequestError> {
    // For the access log.
    let client = slot
        .as_ref()
        .map_or_else(String::new, |slot| slot.ip().to_string());
    let cancel = CancelFlag::default();
    let listed = crate::live_queries::LiveQueries::register(
        state,
        &text,
        &client,
        page.is_some(),
        cancel.clone(),
    );
    // Cancels the query if this future is dropped before the response
    // exists (hyper drops it when the client disconnects early).
    let guard = CancelOnDrop(Some(cancel.clone()));
    let request = QueryRequest {
        // The protocol lets the service pick the base IRI: its endpoint.
        base_iri: Some(endpoint),
        default_graphs: (!params.default_graphs.is_empty()).then_some(params.default_graphs),
        named_graphs: (!params.named_graphs.is_empty()).then_some(params.named_graphs),
        timeout: params.timeout,
        memory_budget: None,
        cancel: cancel.clone(),
        profile: params.explain,
        default_graph_only: params.default_graph_only,
        // Fixed now, so a page's token names the data the query reads.
        snapshot: Some(params.snapshot.unwrap_or_else(|| state.engine.snapshot())),
        inference: params.inference,
        same_as: params.same_as,
        // A paged query's tokens must resume on any server: one core (see
        // `QueryRequest::cores`).
        cores: page.is_some().then_some(1),
    };
    let fault_after = params.fault_after.filter(|_| state.config.fault_injection);
    let page = page.filter(|_| !params.explain).map(|(quantum, resume)| {
        PageRequest::new(
            state.paging.clone(),
            quantum,
            text.clone(),
            request.clone(),
            resume,
        )
        .with_row_limit(params.page_rows)
    });
    let (head_tx, head_rx) = oneshot::channel();
    let job = QueryJob {
        engine: state.engine.clone(),
        text: text.clone(),
        request,
        solutions_format,
        graph_format,
        encoding,
        adaptive_compression: !params.fixed_compression,
        explain: params.explain,
        fault_after,
        received,
        head: head_tx,
        page,
    };
    let continuing = (job.page.as_ref())
        .filter(|p| p.is_resume())
        .map(PageRequest::started_at_ms);
    let task = Box::new(QueryTask::new(job, slot));
    let submitted = match continuing {
        Some(started_at_ms) => state.scheduler.submit_continuation(task, started_at_ms),
        None => match state.config.first_turn_here {
            Some(turn) => state.scheduler.submit_here(task, turn),
            None => state.scheduler.submit(task),
        },
    };
    // Until the head arrives, dropping this future means the client left;
    // an answer that is an error (the query was refused or failed) is no
    // reason to cancel or to say so.
    if let Err(full) = submitted {
        guard.disarm();
        return Err(RequestError::Busy(full.0));
    }
    let head = match head_rx.await {
        Ok(Ok(head)) => head,
        Ok(Err(e)) => {
            guard.disarm();
            return Err(e);
        }
        Err(_) => {
            guard.disarm();
            return Err(RequestError::Internal("the query worker stopped".into()));
        }
    };
    let (content_type, format, queued, parse, plan, rx, page) = match head {
        Head::Whole { content_type, body } => {
            guard.disarm();
            let mut response = body.into_response();
            response
                .headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
            return Ok(response);
        }
        Head::Stream {
            content_type,
            format,
            queued,
            parse,
            plan,
            body,
            page,
        } => (content_type, format, queued, parse, plan, body, page),
    };
    guard.disarm();
    let trailers = accepts_trailers(headers);
    let on_complete: OnComplete = {
        let state = state.clone();
        let query_len = text.len();
        let query_hash = crate::metrics::query_hash(&text);
        let page = page.clone();
        Box::new(move |done| {
            // Off the list of running queries once it is done.
            drop(listed);
            let levels = done.ending.as_ref().map_or_else(String::new, |e| {
                e.levels
                    .iter()
                    .map(i32::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            });
            let (outcome, rows, payload, error) = match &done.ending {
                Some(e) if e.error.is_some() => {
                    (e.outcome, e.rows, e.payload_bytes, e.error.clone())
                }
                Some(e) => ("ok", e.rows, e.payload_bytes, None),
                None => ("cancelled", 0, 0, None),
            };
            let total = received.elapsed();
            state.metrics.record(&QueryRecord {
                outcome,
                latency: total,
                format,
                encoding: encoding.token(),
                wire_bytes: done.wire_bytes,
                payload_bytes: payload,
                rows,
            });
            if let Some(page) = &page {
                state.metrics.record_page(page);
            }
            tracing::info!(
                target: "tern::access",
                client,
                status = 200,
                outcome,
                query_hash,
                format,
                encoding = encoding.token(),
                levels,
                rows,
                payload_bytes = payload,
                wire_bytes = done.wire_bytes,
                queue_ms = crate::metrics::millis(queued),
                parse_ms = crate::metrics::millis(parse),
                plan_ms = crate::metrics::millis(plan),
                total_ms = crate::metrics::millis(total),
                query_bytes = query_len,
                paged = page.is_some(),
                has_next = page.as_ref().is_some_and(|p| p.next.is_some()),
                error = error.as_deref().unwrap_or(""),
                "query"
            );
        })
    };
    let body = ResultBody::new(rx, trailers, cancel, on_complete);
    let mut response = Response::new(Body::new(body));
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, content_type_value(content_type));
    if encoding != Encoding::Identity {
        h.insert(
            header::CONTENT_ENCODING,
            HeaderValue::from_static(encoding.token()),
        );
    }
    h.insert(
        header::VARY,
        HeaderValue::from_static("Accept, Accept-Encoding"),
    );
    h.insert(
        header::TRAILER,
        HeaderValue::from_static("Tern-Error, Tern-Rows, Tern-Execute-Ms, Tern-Total-Ms"),
    );
    let ms = |d: Duration| {
        HeaderValue::from_str(&format!("{:.3}", d.as_secs_f64() * 1e3)).expect("a number")
    };
    h.insert("tern-queue-ms", ms(queued));
    h.insert("tern-parse-ms", ms(parse));
    h.insert("tern-plan-ms", ms(plan));
    if let Some(page) = page {
        page_headers(h, &page);
    }
    Ok(response)
}

/// The token and figures of a page.
fn page_headers(h: &mut HeaderMap, page: &PageStats) {
    let number = |n: u64| HeaderValue::from_str(&n.to_string()).expect("a number");
    if let Some(next) = &page.next {
        if let Ok(value) = HeaderValue::from_str(next) {
            h.insert("tern-next", value);
        }
        h.insert("tern-token-bytes", number(next.len() as u64));
    }
    h.insert("tern-rows-before", number(page.rows_before));
    if let Some(us) = page.suspend_us {
        h.insert("tern-suspend-us", number(us));
    }
    if let Some(us) = page.resume_us {
        h.insert("tern-resume-us", number(us));
    }
    if let Some(parked) = page.resumed_parked {
        let from = if parked { "parked" } else { "token" };
        h.insert("tern-resumed-from", HeaderValue::from_static(from));
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
}

fn content_type_value(media: &'static str) -> HeaderValue {
    if media.starts_with("text/") || media.ends_with("json") || media.ends_with("xml") {
        HeaderValue::from_str(&format!("{media}; charset=utf-8")).expect("a media type")
    } else {
        HeaderValue::from_static(media)
    }
}

struct CancelOnDrop(Option<CancelFlag>);

impl CancelOnDrop {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(flag) = self.0.take() {
            tracing::info!(target: "tern::access", "client went away before the response started: query cancelled");
            flag.cancel();
        }
    }
}

/// The endpoint's own IRI, as the client addressed it.
fn endpoint_iri(headers: &HeaderMap, uri: &Uri) -> String {
    let host = header_str(headers, header::HOST)
        .filter(|h| {
            h.bytes()
                .all(|b| b.is_ascii_graphic() && !b"<>\"{}|^`\\".contains(&b))
        })
        .unwrap_or("localhost");
    format!("http://{host}{}", uri.path())
}

fn service_description(
    headers: &HeaderMap,
    uri: &Uri,
    accept: Option<&str>,
    format: Option<&str>,
    updates: bool,
) -> Result<Response, RequestError> {
    let format = negotiate::graph_format(accept, format).ok_or_else(|| {
        RequestError::NotAcceptable(
            "the service description comes as text/turtle, application/n-triples, \
             application/rdf+xml or application/ld+json"
                .into(),
        )
    })?;
    let mut response =
        service::describe(&endpoint_iri(headers, uri), format, updates).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        content_type_value(format.media_type()),
    );
    Ok(response)
}

async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    let text = state.metrics.render(&crate::metrics::Gauges {
        active: state.scheduler.active(),
        running: state.scheduler.running(),
        queued: state.scheduler.queued(),
        quanta_yielded: state.scheduler.yields(),
        turns_here: state.scheduler.turns_here(),
        parks: state.scheduler.parks(),
        stash: state.paging.stash.usage(),
        stalled: state.scheduler.stalled(),
        stall_drops: state.scheduler.stall_drops(),
        query_memory: state.engine.memory_in_use(),
        spilled: state.engine.spilled(),
        derived_extents: state.engine.derived_extents(),
        cache_bytes: state.engine.snapshot().base().cache_bytes(),
        store: state.engine.store().status(),
    });
    let mut response = text.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}

async fn compact(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    let cross_origin = headers.contains_key(header::ORIGIN);
    let response = match crate::update::compact(state, headers).await {
        Ok(response) => response,
        Err(error) => error.into_response(),
    };
    if cross_origin {
        with_cors(response)
    } else {
        response
    }
}
