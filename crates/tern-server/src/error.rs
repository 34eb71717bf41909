//! Errors a request can end with before its response started, and the
//! status each one gets. Anything a client sent maps to a 4xx; only faults
//! of the server itself are 5xx (and 503 means "try again later").

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use tern_engine::EngineError;

#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    #[error("{0}")]
    BadRequest(String),
    #[error("query syntax error: {0}")]
    Syntax(String),
    #[error("{0}")]
    UnsupportedMediaType(String),
    #[error("{0}")]
    NotAcceptable(String),
    #[error("the query is {len} bytes long; this endpoint accepts at most {max}")]
    TooLarge { len: usize, max: usize },
    #[error("{0}")]
    MethodNotAllowed(String),
    #[error("the server is busy: {0} queries are already waiting; retry shortly")]
    Busy(usize),
    #[error("{0}")]
    NotImplemented(String),
    /// A continuation token whose state expired or lives elsewhere.
    #[error("{0}")]
    Gone(String),
    /// The query was cancelled while its client still waited: by the
    /// operator (`POST /queries/ID/cancel`). (A client that went away
    /// cancels its query too, and reads no answer.)
    #[error("{0}")]
    Cancelled(String),
    #[error("{0}")]
    Timeout(String),
    #[error("{0}")]
    ResourceLimit(String),
    /// One client address has as many queries in the server as it may.
    #[error("{0}")]
    TooManyFromClient(String),
    /// The client did not send its request body in time.
    #[error("{0}")]
    SlowClient(String),
    #[error("{0}")]
    NotFound(String),
    /// An update without the server's write credential.
    #[error("{0}")]
    Unauthorized(String),
    /// Something the server's configuration does not allow.
    #[error("{0}")]
    Forbidden(String),
    #[error("internal error: {0}")]
    Internal(String),
}

impl RequestError {
    pub fn status(&self) -> StatusCode {
        match self {
            RequestError::BadRequest(_) | RequestError::Syntax(_) => StatusCode::BAD_REQUEST,
            RequestError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            RequestError::NotAcceptable(_) => StatusCode::NOT_ACCEPTABLE,
            RequestError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            RequestError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            RequestError::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
            RequestError::NotImplemented(_) => StatusCode::NOT_IMPLEMENTED,
            RequestError::Gone(_) => StatusCode::GONE,
            RequestError::Cancelled(_) => StatusCode::SERVICE_UNAVAILABLE,
            RequestError::Timeout(_) => StatusCode::GATEWAY_TIMEOUT,
            RequestError::ResourceLimit(_) => StatusCode::INSUFFICIENT_STORAGE,
            RequestError::SlowClient(_) => StatusCode::REQUEST_TIMEOUT,
            RequestError::TooManyFromClient(_) => StatusCode::TOO_MANY_REQUESTS,
            RequestError::NotFound(_) => StatusCode::NOT_FOUND,
            RequestError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            RequestError::Forbidden(_) => StatusCode::FORBIDDEN,
            RequestError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The label of `tern_queries_total{outcome=...}`.
    pub fn outcome(&self) -> &'static str {
        match self {
            RequestError::Busy(_) | RequestError::TooManyFromClient(_) => "rejected",
            RequestError::Timeout(_) => "timeout",
            RequestError::ResourceLimit(_) => "memory",
            RequestError::Internal(_) => "error",
            RequestError::Cancelled(_) => "cancelled",
            _ => "client_error",
        }
    }
}

impl From<EngineError> for RequestError {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::Parse(msg) => RequestError::Syntax(msg),
            EngineError::TooComplex(msg) => RequestError::BadRequest(msg),
            EngineError::Unsupported(_) => RequestError::NotImplemented(e.to_string()),
            EngineError::Timeout(_) => RequestError::Timeout(e.to_string()),
            EngineError::MemoryBudget { .. } | EngineError::ServerMemory { .. } => {
                RequestError::ResourceLimit(e.to_string())
            }
            EngineError::StateGone => RequestError::Gone(format!(
                "{e}: it is kept for a limited time and memory; run the query again"
            )),
            EngineError::Cancelled => RequestError::Cancelled(
                "the query was cancelled: by the server's operator, or because its client went away"
                    .into(),
            ),
            EngineError::Update(msg) => RequestError::BadRequest(msg),
            EngineError::Forbidden(msg) => RequestError::Forbidden(msg),
            EngineError::Index(tern_index::IndexError::ReadOnly) => {
                RequestError::Forbidden(e.to_string())
            }
            // A full disk refuses the write (nothing changed); 507 tells the
            // client it may retry once the operator made room.
            EngineError::Index(tern_index::IndexError::Io { ref source, .. })
                if source.kind() == std::io::ErrorKind::StorageFull =>
            {
                RequestError::ResourceLimit(format!(
                    "{e}: the disk is full; the update changed nothing and can be retried \
                     once there is room"
                ))
            }
            EngineError::Spill(ref source) if source.kind() == std::io::ErrorKind::StorageFull => {
                RequestError::ResourceLimit(format!(
                    "{e}: the disk of the spill directory is full; raise the query's memory \
                     budget or make room"
                ))
            }
            other => RequestError::Internal(other.to_string()),
        }
    }
}

impl IntoResponse for RequestError {
    fn into_response(self) -> Response {
        let mut response = (self.status(), format!("{self}\n")).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        if matches!(
            self,
            RequestError::Busy(_) | RequestError::TooManyFromClient(_)
        ) {
            headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        if let RequestError::Unauthorized(_) = self {
            headers.insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"tern\""),
            );
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_is_507_and_other_io_errors_500() {
        let io = |kind| {
            EngineError::Index(tern_index::IndexError::Io {
                path: "store/wal/1.log".into(),
                source: std::io::Error::from(kind),
            })
        };
        let full = RequestError::from(io(std::io::ErrorKind::StorageFull));
        assert_eq!(full.status(), StatusCode::INSUFFICIENT_STORAGE);
        assert!(full.to_string().contains("store/wal/1.log"), "{full}");
        assert!(full.to_string().contains("the disk is full"), "{full}");
        let other = RequestError::from(io(std::io::ErrorKind::PermissionDenied));
        assert_eq!(other.status(), StatusCode::INTERNAL_SERVER_ERROR);
    }
}
