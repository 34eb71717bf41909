//! Opening an index directory as a store, for the commands that read it.

use crate::cache::CacheArgs;
use anyhow::{Context, Result};
use std::path::Path;
use std::sync::Arc;
use tern_index::{Store, StoreOptions};

/// The store in `dir` as its updates left it, read-only: the log is read,
/// never written (a server may be appending to it).
pub fn open_read_only(dir: &Path, cache: Option<CacheArgs>) -> Result<Arc<Store>> {
    let options = StoreOptions {
        cache_budget: cache.map(|c| c.budget()),
        ..StoreOptions::default()
    };
    Store::open(dir, false, options).with_context(|| format!("{}", dir.display()))
}
