//! The streaming response body: chunks from the producer (or compression
//! stage), then runtime figures or the error in HTTP trailers.
//!
//! HTTP/1.1 only carries trailers to clients that sent `TE: trailers`. For
//! other clients a failed result must not look complete, so the body ends
//! with an error: hyper then closes the connection without the final
//! zero-length chunk, and the client sees a broken transfer.

use crate::chunk::{Chunk, Ending};
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use std::pin::Pin;
use std::task::{Context, Poll};
use tern_engine::CancelFlag;
use tokio::sync::mpsc;

pub const TRAILER_ERROR: HeaderName = HeaderName::from_static("tern-error");
pub const TRAILER_ROWS: HeaderName = HeaderName::from_static("tern-rows");
pub const TRAILER_EXECUTE: HeaderName = HeaderName::from_static("tern-execute-ms");
pub const TRAILER_TOTAL: HeaderName = HeaderName::from_static("tern-total-ms");

/// What the body reports when it is done or dropped.
#[derive(Debug)]
pub struct Completion {
    /// None when the client went away (or the producer died) before the end.
    pub ending: Option<Ending>,
    /// Bytes handed to the network, after compression.
    pub wire_bytes: u64,
}

pub type OnComplete = Box<dyn FnOnce(Completion) + Send>;

pub struct ResultBody {
    rx: mpsc::Receiver<Chunk>,
    trailers_allowed: bool,
    /// Cancels the query when the body is dropped before its end: hyper
    /// drops the body when the client disconnects.
    cancel: CancelFlag,
    ending: Option<Ending>,
    finished: bool,
    /// A cut to report on the next poll: the poll before it returns
    /// Pending, so that hyper first flushes what it buffered (for a small
    /// result, the status line, headers and every row); breaking the
    /// connection at once would lose them and look like no response at all.
    cut: Option<CutShort>,
    wire_bytes: u64,
    on_complete: Option<OnComplete>,
}

impl ResultBody {
    pub fn new(
        rx: mpsc::Receiver<Chunk>,
        trailers_allowed: bool,
        cancel: CancelFlag,
        on_complete: OnComplete,
    ) -> ResultBody {
        ResultBody {
            rx,
            trailers_allowed,
            cancel,
            ending: None,
            finished: false,
            cut: None,
            wire_bytes: 0,
            on_complete: Some(on_complete),
        }
    }

    fn complete(&mut self) {
        if let Some(f) = self.on_complete.take() {
            f(Completion {
                ending: self.ending.clone(),
                wire_bytes: self.wire_bytes,
            });
        }
    }
}

/// The error that breaks a transfer whose result failed.
#[derive(Debug, thiserror::Error)]
#[error("result cut short: {0}")]
pub struct CutShort(String);

fn header_value(text: &str) -> HeaderValue {
    // Header values cannot hold line breaks or non-visible bytes.
    let clean: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                ' '
            }
        })
        .take(1000)
        .collect();
    HeaderValue::from_str(&clean).unwrap_or_else(|_| HeaderValue::from_static("error"))
}

pub fn trailers(ending: &Ending) -> HeaderMap {
    let mut map = HeaderMap::new();
    map.insert(TRAILER_ROWS, HeaderValue::from(ending.rows));
    let ms = |d: std::time::Duration| header_value(&format!("{:.3}", d.as_secs_f64() * 1e3));
    map.insert(TRAILER_EXECUTE, ms(ending.execute));
    map.insert(TRAILER_TOTAL, ms(ending.total));
    if let Some(error) = &ending.error {
        map.insert(TRAILER_ERROR, header_value(error));
    }
    map
}

impl ResultBody {
    fn cut_after_flush(
        &mut self,
        cut: CutShort,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, CutShort>>> {
        self.cut = Some(cut);
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl Body for ResultBody {
    type Data = Bytes;
    type Error = CutShort;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, CutShort>>> {
        if let Some(cut) = self.cut.take() {
            return Poll::Ready(Some(Err(cut)));
        }
        if self.finished {
            return Poll::Ready(None);
        }
        match self.rx.poll_recv(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(Chunk::Data(data))) => {
                self.wire_bytes += data.len() as u64;
                Poll::Ready(Some(Ok(Frame::data(data))))
            }
            Poll::Ready(Some(Chunk::End(ending))) => {
                self.finished = true;
                let error = ending.error.clone();
                let map = trailers(&ending);
                self.ending = Some(ending);
                self.complete();
                match error {
                    Some(e) if !self.trailers_allowed => self.cut_after_flush(CutShort(e), cx),
                    _ if self.trailers_allowed => Poll::Ready(Some(Ok(Frame::trailers(map)))),
                    _ => Poll::Ready(None),
                }
            }
            Poll::Ready(None) => {
                // The producer or compressor stopped without an end.
                self.finished = true;
                self.complete();
                self.cut_after_flush(CutShort("the result stream broke off".into()), cx)
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.finished && self.cut.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

impl Drop for ResultBody {
    fn drop(&mut self) {
        if !self.finished {
            self.cancel.cancel();
            self.complete();
        }
    }
}
