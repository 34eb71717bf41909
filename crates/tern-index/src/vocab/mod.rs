//! The vocabulary: every IRI and literal that is not inlined in its ID, sorted by
//! [`term_key`](crate::term_key) order, so that the vocabulary index of a term is
//! its ID payload and ID order is term order.
//!
//! On disk: blocks of front-coded keys, each block compressed with zstd
//! with a dictionary shared by all blocks (`vocab.blocks`, `vocab.dict`); a block directory with each block's first entry number, byte
//! offset and a separator key for binary search (`vocab.index`, `vocab.firsts`). Everything is read through
//! mmap; only decoded blocks that were recently used are held in memory.

mod block;
mod reader;
mod writer;

pub use block::dictionary;
pub use reader::Vocabulary;
pub use writer::VocabWriter;

pub(crate) const BLOCKS_FILE: &str = "vocab.blocks";
pub(crate) const INDEX_FILE: &str = "vocab.index";
pub(crate) const FIRSTS_FILE: &str = "vocab.firsts";
pub(crate) const DICTIONARY_FILE: &str = "vocab.dict";
const MAGIC: &[u8; 8] = b"TERNVOC1";
/// Bytes of one block directory record: first entry, block offset, first-key offset.
const RECORD: usize = 24;
