//! What travels from a query's producer to the response body.

use bytes::Bytes;
use std::time::Duration;

pub enum Chunk {
    Data(Bytes),
    /// The last message: how the result ended.
    End(Ending),
}

impl Chunk {
    /// Bytes of result it carries.
    pub fn data_len(&self) -> usize {
        match self {
            Chunk::Data(data) => data.len(),
            Chunk::End(_) => 0,
        }
    }
}

/// How a streamed result ended.
#[derive(Debug, Clone, Default)]
pub struct Ending {
    pub rows: u64,
    /// Bytes of the result before compression.
    pub payload_bytes: u64,
    /// From the first row asked of the engine to the last row written.
    pub execute: Duration,
    /// From the request's arrival to the end of production.
    pub total: Duration,
    /// The failure that cut the result, if it was cut.
    pub error: Option<String>,
    /// Outcome label for metrics when `error` is set.
    pub outcome: &'static str,
    /// The compression levels the stream went through (none uncompressed),
    /// in order: the adaptive level's path, for the access log.
    pub levels: Vec<i32>,
}
