//! Entry points for the fuzz targets (`fuzz/`, feature `fuzzing`): the
//! request layer on bytes from memory, with no server running.

use crate::{negotiate, paging, protocol};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method};

/// Reads `data` as a request: a method, a query string, headers and a
/// body, split at the first lines; parses the protocol parameters, and
/// negotiates formats, encodings and quanta from whatever it finds.
pub fn request(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.splitn(4, '\n');
    let method = match lines.next().unwrap_or("").trim() {
        "POST" => Method::POST,
        "PUT" => Method::PUT,
        "OPTIONS" => Method::OPTIONS,
        _ => Method::GET,
    };
    let query = lines.next().map(str::trim_end);
    let mut headers = HeaderMap::new();
    for header in lines.next().unwrap_or("").split('\t') {
        if let Some((name, value)) = header.split_once(':') {
            if let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(name.trim().as_bytes()),
                HeaderValue::from_str(value.trim()),
            ) {
                headers.append(name, value);
            }
        }
    }
    let body = lines.next().unwrap_or("").as_bytes();
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let _ = negotiate::solutions_format(header("accept"), query);
    let _ = negotiate::graph_format(header("accept"), query);
    let _ = negotiate::encoding(header("accept-encoding"));
    if let Some(quantum) = header("tern-quantum") {
        let _ = paging::parse_quantum(quantum);
    }
    if let Ok(params) = protocol::parse_request(&method, query, &headers, body, 1 << 20) {
        let format = params.format.as_deref();
        let _ = negotiate::solutions_format(header("accept"), format);
        let _ = negotiate::graph_format(header("accept"), format);
        if let Some(quantum) = &params.quantum {
            let _ = paging::parse_quantum(quantum);
        }
    }
}
