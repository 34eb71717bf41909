//! Where a suspended query stopped, as one value: the state of its
//! operators and of its query context; and
//! the compact bytes a continuation token carries.

use super::{bad_state, OperatorState};
use crate::EngineError;

/// Where a suspended query stopped: the state of its operators and of its
/// query context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedQuery {
    /// The operators had produced everything.
    pub done: bool,
    pub plan: OperatorState,
    pub context: OperatorState,
    /// Rows the operators produce after `plan`'s point that an earlier
    /// page already had: dropped on resuming (a page of `page-rows` that
    /// ended within a batch; see `SolutionStream::hand_back`).
    pub skip: u64,
}

/// 2: CONSTRUCT's template is an operator of the plan, with no state of
/// its own beside it. 3: rows to skip after the plan's point (version 2
/// states are read as skipping none).
const SAVED_QUERY_VERSION: u8 = 3;

impl SavedQuery {
    /// Whether resuming needs materialized state from the stash of the
    /// process that suspended the query (otherwise any process with the same
    /// index can resume it).
    pub fn uses_stash(&self) -> bool {
        !self.stash_handles().is_empty()
    }

    /// The state of a query only its parked operators (stash entry
    /// `handle`) can continue: it held materialized state when suspended.
    pub(crate) fn parked(handle: u64) -> SavedQuery {
        SavedQuery {
            done: false,
            plan: OperatorState::stashed(handle),
            context: OperatorState::default(),
            skip: 0,
        }
    }

    /// Whether this is [`SavedQuery::parked`] for stash entry `handle`.
    pub fn is_parked(&self, handle: u64) -> bool {
        self.plan.stashed == Some(handle) && self.plan.children.is_empty()
    }

    /// The stash entries the saved state refers to.
    pub fn stash_handles(&self) -> Vec<u64> {
        fn collect(state: &OperatorState, out: &mut Vec<u64>) {
            out.extend(state.stashed);
            state.children.iter().for_each(|c| collect(c, out));
        }
        let mut out = Vec::new();
        collect(&self.plan, &mut out);
        collect(&self.context, &mut out);
        out
    }

    /// Compact bytes: a version byte, whether done, the rows to skip, then
    /// the states.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![SAVED_QUERY_VERSION, u8::from(self.done)];
        super::state::write_varint(self.skip, &mut out);
        self.plan.encode(&mut out);
        self.context.encode(&mut out);
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<SavedQuery, EngineError> {
        let [version, done, rest @ ..] = bytes else {
            return Err(bad_state("truncated"));
        };
        let mut rest = rest;
        let skip = match *version {
            SAVED_QUERY_VERSION => super::state::read_varint(&mut rest)?,
            2 => 0,
            _ => return Err(bad_state(format!("saved by format version {version}"))),
        };
        let plan = OperatorState::decode(&mut rest)?;
        let context = OperatorState::decode(&mut rest)?;
        if !rest.is_empty() {
            return Err(bad_state("trailing bytes"));
        }
        Ok(SavedQuery {
            done: *done == 1,
            plan,
            context,
            skip,
        })
    }
}
