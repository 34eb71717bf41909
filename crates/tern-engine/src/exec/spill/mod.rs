//! Spilling to disk: the sorts, groups and hash joins whose state would
//! not fit in the query's memory budget write rows to temporary files and
//! read them back, instead of failing the query.
//!
//! Owns the files (`row_file`: rows of one width in compressed blocks, in
//! segments read back in order), sorts in runs (`external_sort`) and their
//! merge (`run_merge`), and hash partitioning (`partitions`) with the parts
//! it leaves to read back (`spilled_parts`). The operators decide when to spill:
//! when their state would not [`fit`](crate::context::MemoryCharge::fits).

mod external_sort;
mod partitions;
mod row_file;
mod run_merge;
mod spilled_parts;

pub use external_sort::ExternalSort;
pub use partitions::Partitions;
pub use row_file::{RowFile, Segment, SegmentReader};
pub use run_merge::RunMerge;
pub use spilled_parts::SpilledParts;
