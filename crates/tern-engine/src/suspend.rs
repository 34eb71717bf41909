//! Saved state of suspended queries (DESIGN.md, "Preemption").
//!
//! A suspended operator tree becomes an [`OperatorState`] tree: small numbers
//! (scan positions, counters) that can travel in a continuation token, plus
//! references into a [`Stash`] for materialized state (hash tables, sorted
//! runs, groups) that stays on the server. The plan itself is not saved:
//! planning is deterministic for a query and an index, so resuming plans the
//! query again and hands each operator its state.

use crate::EngineError;
use rustc_hash::FxHashMap;
use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// The saved state of one operator and, in order, of its inputs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OperatorState {
    /// Positions and counters; each operator knows what its numbers mean.
    pub numbers: Vec<u64>,
    /// Materialized state left in the [`Stash`].
    pub stashed: Option<u64>,
    pub children: Vec<OperatorState>,
}

impl OperatorState {
    pub fn new(numbers: Vec<u64>, children: Vec<OperatorState>) -> OperatorState {
        OperatorState {
            numbers,
            stashed: None,
            children,
        }
    }

    /// The state of an operator whose state is all materialized.
    pub fn stashed(handle: u64) -> OperatorState {
        OperatorState {
            stashed: Some(handle),
            ..OperatorState::default()
        }
    }

    /// The state of an operator whose only state is its input's.
    pub fn wrapping(child: OperatorState) -> OperatorState {
        OperatorState::new(Vec::new(), vec![child])
    }

    /// The single child state, for operators with one input.
    pub fn into_child(self) -> Result<OperatorState, EngineError> {
        let [child] = self.into_children::<1>()?;
        Ok(child)
    }

    /// Exactly `N` child states, or an error naming the mismatch.
    pub fn into_children<const N: usize>(self) -> Result<[OperatorState; N], EngineError> {
        let found = self.children.len();
        self.children
            .try_into()
            .map_err(|_| bad_state(format!("expected {N} inputs, found {found}")))
    }

    /// The number at `i`, or an error if the state is too short.
    pub fn number(&self, i: usize) -> Result<u64, EngineError> {
        self.numbers
            .get(i)
            .copied()
            .ok_or_else(|| bad_state(format!("missing position {i}")))
    }

    /// Appends the compact byte form: varint lengths and values.
    pub fn encode(&self, out: &mut Vec<u8>) {
        write_varint(self.numbers.len() as u64, out);
        for &n in &self.numbers {
            write_varint(n, out);
        }
        write_varint(self.stashed.map_or(0, |h| h + 1), out);
        write_varint(self.children.len() as u64, out);
        for child in &self.children {
            child.encode(out);
        }
    }

    /// Reads a state written by [`encode`](Self::encode), advancing `bytes`.
    pub fn decode(bytes: &mut &[u8]) -> Result<OperatorState, EngineError> {
        Self::decode_at_depth(bytes, 0)
    }

    fn decode_at_depth(bytes: &mut &[u8], depth: usize) -> Result<OperatorState, EngineError> {
        if depth > 256 {
            return Err(bad_state("nested too deeply"));
        }
        let count = read_varint(bytes)?;
        let numbers = (0..count)
            .map(|_| read_varint(bytes))
            .collect::<Result<_, _>>()?;
        let stashed = read_varint(bytes)?.checked_sub(1);
        let children = (0..read_varint(bytes)?)
            .map(|_| Self::decode_at_depth(bytes, depth + 1))
            .collect::<Result<_, _>>()?;
        Ok(OperatorState {
            numbers,
            stashed,
            children,
        })
    }
}

fn write_varint(mut value: u64, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn read_varint(bytes: &mut &[u8]) -> Result<u64, EngineError> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = bytes.split_first().ok_or_else(|| bad_state("truncated"))?;
        *bytes = rest;
        value |= u64::from(b & 0x7F) << shift;
        if b < 0x80 {
            return Ok(value);
        }
    }
    Err(bad_state("number too long"))
}

pub fn bad_state(reason: impl Into<String>) -> EngineError {
    EngineError::BadState(reason.into())
}

/// Materialized state of suspended queries, kept in memory by handle until a
/// resumed operator takes it back.
#[derive(Default)]
pub struct Stash {
    next: AtomicU64,
    items: Mutex<FxHashMap<u64, Box<dyn Any + Send>>>,
}

impl Stash {
    pub fn put<T: Any + Send>(&self, value: T) -> u64 {
        let handle = self.next.fetch_add(1, Ordering::Relaxed);
        self.items.lock().unwrap().insert(handle, Box::new(value));
        handle
    }

    /// Takes back what [`put`](Self::put) left; an error if it is gone (expired
    /// or taken by an earlier resume) or of another type.
    pub fn take<T: Any>(&self, handle: u64) -> Result<T, EngineError> {
        let item = self
            .items
            .lock()
            .unwrap()
            .remove(&handle)
            .ok_or(EngineError::StateGone)?;
        item.downcast::<T>()
            .map(|b| *b)
            .map_err(|_| bad_state("stashed state of another operator"))
    }

    /// Drops stashed state (an abandoned query).
    pub fn discard(&self, handle: u64) {
        self.items.lock().unwrap().remove(&handle);
    }

    pub fn len(&self) -> usize {
        self.items.lock().unwrap().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Saves an operator's materialized state into the stash, if it has any.
pub fn stash_opt<T: Any + Send>(stash: &Stash, value: Option<T>) -> Option<u64> {
    value.map(|v| stash.put(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip_through_bytes() {
        let state = OperatorState {
            numbers: vec![0, 1, u64::MAX, 300],
            stashed: Some(7),
            children: vec![
                OperatorState::new(vec![5], vec![]),
                OperatorState::wrapping(OperatorState::default()),
            ],
        };
        let mut bytes = Vec::new();
        state.encode(&mut bytes);
        let mut reader = bytes.as_slice();
        assert_eq!(OperatorState::decode(&mut reader).unwrap(), state);
        assert!(reader.is_empty());
        let mut truncated = &bytes[..bytes.len() - 1];
        assert!(OperatorState::decode(&mut truncated).is_err());
    }

    #[test]
    fn stashed_state_is_taken_once() {
        let stash = Stash::default();
        let handle = stash.put(vec![1u64, 2]);
        assert!(stash.take::<String>(handle).is_err(), "wrong type");
        let handle = stash.put(vec![1u64, 2]);
        assert_eq!(stash.take::<Vec<u64>>(handle).unwrap(), vec![1, 2]);
        assert!(matches!(
            stash.take::<Vec<u64>>(handle),
            Err(EngineError::StateGone)
        ));
    }
}
