//! The saved state of one operator: small numbers (scan positions,
//! counters) that can travel in a continuation token, a reference into the
//! [`Stash`] for materialized state, and the states of its inputs.

use super::Stash;
use crate::EngineError;
use std::any::Any;

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

    /// The value this state stashed (`what` names it in the error when
    /// there is none).
    pub fn take_stashed<T: Any>(&self, stash: &Stash, what: &str) -> Result<T, EngineError> {
        let handle = self.stashed.ok_or_else(|| bad_state(what))?;
        stash.take(handle)
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

pub(super) fn write_varint(mut value: u64, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

pub(super) fn read_varint(bytes: &mut &[u8]) -> Result<u64, EngineError> {
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
}
