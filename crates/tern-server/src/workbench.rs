//! What the query workbench at `/` needs besides `/sparql`: its assets
//! (built by `ui/build.sh` into `ui/dist`, embedded in the binary or read
//! from `--ui-dir`), the predeclared prefixes (`/prefixes`) and the
//! operator's example queries (`/examples`).

use crate::server::AppState;
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The built workbench, as committed in `ui/dist`.
const EMBEDDED: &[(&str, &str, &str)] = &[
    (
        "index.html",
        "text/html; charset=utf-8",
        include_str!("../../../ui/dist/index.html"),
    ),
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../ui/dist/app.js"),
    ),
    (
        "app.css",
        "text/css; charset=utf-8",
        include_str!("../../../ui/dist/app.css"),
    ),
];

/// An example query offered in the workbench.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Example {
    pub name: String,
    pub query: String,
}

/// Reads example queries: each starts with a line `# title: NAME` and
/// runs to the next such line; comment lines before the first are skipped.
pub fn parse_examples(text: &str) -> Result<Vec<Example>, String> {
    let mut examples: Vec<Example> = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if let Some(title) = line.trim().strip_prefix("# title:") {
            let name = title.trim();
            if name.is_empty() {
                return Err(format!("line {}: an example without a title", number + 1));
            }
            examples.push(Example {
                name: name.to_owned(),
                query: String::new(),
            });
        } else if let Some(example) = examples.last_mut() {
            example.query.push_str(line);
            example.query.push('\n');
        } else if !line.trim().is_empty() && !line.trim_start().starts_with('#') {
            return Err(format!(
                "line {}: text before the first `# title:` line",
                number + 1
            ));
        }
    }
    for example in &mut examples {
        example.query = example.query.trim().to_owned() + "\n";
        if example.query.trim().is_empty() {
            return Err(format!("the example {:?} has no query", example.name));
        }
    }
    Ok(examples)
}

/// `GET /`: the workbench page.
pub async fn index(State(state): State<Arc<AppState>>) -> Response {
    asset(&state, "index.html").await
}

/// `GET /ui/{file}`: its script and style.
pub async fn ui_file(State(state): State<Arc<AppState>>, Path(file): Path<String>) -> Response {
    asset(&state, &file).await
}

/// (Read from disk on the async thread: only while developing the
/// workbench, and the files are small.)
async fn asset(state: &AppState, name: &str) -> Response {
    let Some(&(name, media_type, embedded)) = EMBEDDED.iter().find(|(n, _, _)| *n == name) else {
        return (StatusCode::NOT_FOUND, "no such file of the workbench\n").into_response();
    };
    let body = match &state.config.ui_dir {
        // From disk while the workbench is developed: edits show on reload.
        Some(dir) => match std::fs::read(dir.join(name)) {
            Ok(bytes) => bytes,
            Err(e) => {
                return (
                    StatusCode::NOT_FOUND,
                    format!("{}: {e}\n", dir.join(name).display()),
                )
                    .into_response()
            }
        },
        None => embedded.as_bytes().to_vec(),
    };
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
    // The assets change with the binary: revalidate rather than keep.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// `GET /prefixes`: the prefixes queries may use without declaring them.
pub async fn prefixes(State(state): State<Arc<AppState>>) -> Response {
    let prefixes: serde_json::Map<String, serde_json::Value> = state
        .engine
        .prefixes()
        .iter()
        .map(|(name, iri)| (name.clone(), serde_json::Value::String(iri.clone())))
        .collect();
    json(&serde_json::json!({ "prefixes": prefixes }))
}

/// `GET /examples`: the example queries the operator gave (`--examples`).
pub async fn examples(State(state): State<Arc<AppState>>) -> Response {
    json(&serde_json::json!({ "examples": state.config.examples }))
}

pub(crate) fn json(value: &serde_json::Value) -> Response {
    let mut response = format!("{value}\n").into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_are_read_by_title() {
        let text =
            "# for the sample\n\n# title: One\nSELECT * { ?s ?p ?o }\n\n# title: Two\nASK {}\n";
        let examples = parse_examples(text).unwrap();
        assert_eq!(examples.len(), 2);
        assert_eq!(examples[0].name, "One");
        assert_eq!(examples[0].query, "SELECT * { ?s ?p ?o }\n");
        assert_eq!(examples[1].query, "ASK {}\n");
        assert!(parse_examples("SELECT 1\n# title: x\nASK {}")
            .unwrap_err()
            .contains("line 1"));
        assert!(parse_examples("# title: empty\n\n")
            .unwrap_err()
            .contains("no query"));
    }

    #[test]
    fn the_page_refers_to_the_embedded_script_and_style() {
        let (_, _, page) = EMBEDDED[0];
        assert!(page.contains("/ui/app.js"), "index.html loads /ui/app.js");
        assert!(page.contains("/ui/app.css"), "index.html loads /ui/app.css");
    }
}
