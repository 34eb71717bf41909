//! The `--vocab-cache` and `--block-cache` options of the commands that read
//! an index: memory for decoded index blocks kept between lookups.

use crate::size::parse_size;
use clap::Args;

#[derive(Args, Clone, Copy)]
pub struct CacheArgs {
    /// Memory for decoded vocabulary blocks, e.g. 256M. Writing results
    /// decodes terms from all over the vocabulary: the default lets a full
    /// export of BSBM 10M run at full speed and keeps the server within
    /// 100 MB of its idle RSS while it does.
    #[arg(long, value_parser = parse_size, default_value = "64M")]
    vocab_cache: u64,
    /// Memory for decoded permutation blocks (one budget for the five
    /// permutations), e.g. 256M. Index joins probe them row by row; a scan
    /// of up to a sixteenth of it keeps all its blocks, a longer one only
    /// its first two, so exports do not fill it. Default: a sixteenth of
    /// this machine's memory, at least 96M and at most 1G (filled only as
    /// queries read blocks)
    #[arg(long, value_parser = parse_size)]
    block_cache: Option<u64>,
}

/// Bounds of the default block cache. The cache fills only with blocks
/// queries read, so a small index never takes more than it has; at BSBM
/// 100M, BI Q06 (reviews of one producer's products, one lookup per
/// review in four rating predicates) thrashed 96 MiB at 326 ms a run and
/// took 18 ms with 384 MiB.
const BLOCK_CACHE_MIN: u64 = 96 << 20;
const BLOCK_CACHE_MAX: u64 = 1 << 30;

impl CacheArgs {
    /// (vocabulary, permutations) cache bytes.
    pub fn budget(&self) -> (usize, usize) {
        let block_cache = self.block_cache.unwrap_or_else(|| {
            (crate::size::total_memory() / 16).clamp(BLOCK_CACHE_MIN, BLOCK_CACHE_MAX)
        });
        (self.vocab_cache as usize, block_cache as usize)
    }
}
