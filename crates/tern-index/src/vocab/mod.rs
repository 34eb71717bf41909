//! The vocabulary: every IRI and literal that is not inlined in its ID, sorted by
//! [`term_key`](crate::term_key) order, so that the vocabulary index of a term is
//! its ID payload and ID order is term order.
//!
//! On disk, two sections of blocks of front-coded keys, compressed with zstd
//! and a dictionary shared by the section's blocks, or for a long section of
//! text with a word-token code (`token_code`) shared the same way; both in
//! `vocab.dict`:
//!
//! * the main section (`vocab.blocks`) holds every entry: short keys whole,
//!   long keys (descriptions, reviews…) as a short stub; its directory
//!   (`vocab.index`) gives each block's first entry, byte offset, separator key
//!   for binary search (`vocab.firsts`) and number of long keys before it;
//! * the long section (`vocab.long`, directory `vocab.longindex`) holds the
//!   long keys whole, in order; a token-coded section one key to a block,
//!   so that a lookup decodes only the key it asks for.
//!
//! Everything is read through mmap; decoded blocks are kept within a memory
//! budget (see [`Vocabulary::set_cache_budget`]), each in the form its
//! last user wanted: keys expanded, or front-coded (zstd undone) for copying
//! many keys at once, which walks to them without expanding the block.

mod block;
mod decoding_slot;
mod entropy_tables;
mod front_coded_walk;
mod kinds;
mod reader;
mod token_code;
mod writer;

pub use block::{dictionaries, Dictionaries, LONG_KEY};
pub use kinds::TermKind;
pub use reader::{Keys, Vocabulary, DEFAULT_CACHE_BYTES};
pub use writer::VocabWriter;

pub(crate) const BLOCKS_FILE: &str = "vocab.blocks";
pub(crate) const INDEX_FILE: &str = "vocab.index";
pub(crate) const FIRSTS_FILE: &str = "vocab.firsts";
pub(crate) const DICTIONARY_FILE: &str = "vocab.dict";
pub(crate) const LONG_BLOCKS_FILE: &str = "vocab.long";
pub(crate) const LONG_INDEX_FILE: &str = "vocab.longindex";
const MAGIC: &[u8; 8] = b"TERNVOC2";
/// `vocab.index` header: magic, entries, main blocks, long entries, long blocks.
const HEADER: usize = 40;
/// Bytes of one main block directory record: first entry, block offset,
/// separator offset, long entries before the block.
const RECORD: usize = 32;
/// Bytes of one long block directory record: first long entry, block offset.
const LONG_RECORD: usize = 16;
