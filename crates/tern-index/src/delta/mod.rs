//! The delta: quads inserted and deleted since the base index was built.
//!
//! The base index is immutable. Changes are kept beside it as sorted
//! [`Run`]s (one per committed update, merged as they pile up, like the
//! levels of a log-structured merge tree) and terms new to the base in the
//! [`DeltaVocab`]. A reader's snapshot is a list of runs and a length of
//! the delta vocabulary: both are shared, never changed, so a snapshot
//! costs a few reference counts and stays valid however many updates come
//! after it. Scans merge the base's rows with the runs' rows
//! ([`MergedScan`], [`MergedLookup`]).
//!
//! Every change a run records is *effective*: an insert of a quad that was
//! not visible, a delete of one that was. So a quad's visibility is decided
//! by the newest run that mentions it, and a count is the base's count plus
//! the signed number of changes in range, with no merging at all.

mod merge;
mod run;
mod vocab;

pub use merge::{ChangeCursor, MergedLookup, MergedScan};
pub use run::{Change, Run, Runs, COMMIT_MERGE_LIMIT};
pub use vocab::{DeltaVocab, VocabView};
