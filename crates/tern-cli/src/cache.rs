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
    /// its first two, so exports do not fill it.
    #[arg(long, value_parser = parse_size, default_value = "96M")]
    block_cache: u64,
}

impl CacheArgs {
    /// (vocabulary, permutations) cache bytes.
    pub fn budget(&self) -> (usize, usize) {
        (self.vocab_cache as usize, self.block_cache as usize)
    }
}
