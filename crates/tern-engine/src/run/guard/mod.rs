//! How deeply a query may nest, so that no query text can exhaust a
//! thread's stack: parsing, planning, evaluating and even dropping a query
//! recurse on its structure.
//!
//! Checks that neither recurse nor take long:
//! - before parsing, on the text (`text`): brackets (`{`, `(`, `[`) open
//!   levels of the parser's recursion, at most [`MAX_TEXT_NESTING`]; and
//!   the parser's work, which some nested operators multiply, is at most
//!   [`MAX_PARSE_WORK`];
//! - after parsing, on the algebra: chains that the parser builds without
//!   recursing (UNION branches, OPTIONALs and FILTERs in one group, `||`
//!   and `+` chains, path sequences) still make a deep tree; at most
//!   [`MAX_ALGEBRA_DEPTH`] levels (`algebra`). A query over the limit is
//!   taken apart node by node (`dismantle`) rather than dropped recursively.
//!
//! Query threads run on stacks sized for these limits ([`QUERY_STACK_BYTES`]).

mod algebra;
mod dismantle;
mod text;

pub use algebra::{check_algebra, check_update};
pub use text::check_text;

#[cfg(test)]
mod tests;

/// Longest query text, in bytes. Parsing some long chains (UNION branches)
/// takes about 18 bytes of stack per byte of text, so this bounds the stack
/// that even a refused query needs well within [`QUERY_STACK_BYTES`].
pub const MAX_QUERY_BYTES: usize = 8 << 20;

/// Most levels of brackets in a query's text.
pub const MAX_TEXT_NESTING: usize = 256;

/// Most bytes the parser may read, counting a byte again each time the
/// parser goes back over it (see `text`): 4 MiB, half a second of parsing
/// at worst, where no query without nested REGEX, SUBSTR, REPLACE or `!`
/// reads a byte twice.
pub const MAX_PARSE_WORK: u64 = 4 << 20;

/// Most levels of a parsed query's algebra: graph patterns, expressions and
/// property paths, each operand one level below its operator.
pub const MAX_ALGEBRA_DEPTH: usize = 2_000;

/// The stack a thread that parses, plans or runs queries needs for queries
/// within the limits above, with room to spare: queries at the nesting and
/// depth limits took at most 3 MiB, and refusing a 1.8 MB chain of 200,000
/// UNION branches 32 MiB (measured with `tern query`).
/// Only the pages a query touches are ever backed by memory.
pub const QUERY_STACK_BYTES: usize = 256 << 20;

/// Gives the threads of rayon's global pool, which evaluate expressions
/// over large batches, stacks of [`QUERY_STACK_BYTES`]. Call it before
/// anything uses the pool; later calls (and a pool built already) change
/// nothing.
pub fn init_thread_pool() {
    let _ = rayon::ThreadPoolBuilder::new()
        .stack_size(QUERY_STACK_BYTES)
        .thread_name(|i| format!("tern-rayon-{i}"))
        .build_global();
}
