//! `index.json`: what an index is, how it was built, and what it holds.

use serde::{Deserialize, Serialize};

pub(crate) const META_FILE: &str = "index.json";
pub const FORMAT_VERSION: u32 = 3;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IndexMeta {
    pub format_version: u32,
    /// Random identifier of this build; names the snapshot queries run on.
    pub index_id: String,
    pub tern_version: String,
    /// Seconds since the Unix epoch at the end of the build.
    pub created: u64,
    pub inputs: Vec<String>,
    pub triples: u64,
    pub vocabulary_terms: u64,
    pub blank_nodes: u64,
    pub distinct_terms: u64,
    /// Statements read from the input, before duplicates were removed.
    pub statements_read: u64,
    /// Bad statements skipped under `--lenient`.
    pub statements_skipped: u64,
    pub vocabulary_bytes: u64,
    pub permutation_bytes: u64,
    pub index_bytes: u64,
    pub bytes_per_triple: f64,
    /// Seconds spent in each build phase, in order.
    pub phases: Vec<(String, f64)>,
    pub total_seconds: f64,
}
