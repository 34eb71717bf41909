//! The literal rows of an equality join's build side, grouped so that a
//! literal probe value is compared only with the rows that can be equal to
//! it (`FILTER(?y1 = ?y2)` on years compared every pair before).
//!
//! `=` on literals is value equality within a kind and false (or an error)
//! across kinds, so the groups are:
//! - numbers (every XSD numeric type) by their value as a double: equal
//!   numbers have equal doubles; unequal ones with equal doubles (beyond 2^53)
//!   share a group and the join's condition tells them apart;
//! - strings (simple, `xsd:string`, language-tagged) by their text;
//! - every other literal (dates, booleans, unknown or ill-typed values) in
//!   one group, compared with the condition as before.

use crate::context::QueryContext;
use crate::expr::numeric_double;
use crate::EngineError;
use oxrdf::vocab::{rdf, xsd};
use oxrdf::Term;
use rustc_hash::FxHashMap;
use tern_index::Id;

/// Which build rows a literal probe value is compared with.
#[derive(Default)]
pub struct LiteralBuckets {
    by_value: FxHashMap<ValueKey, Vec<u32>>,
    others: Vec<u32>,
    /// Every literal is a string (see [`only_strings`](Self::only_strings)).
    only_strings: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum ValueKey {
    /// The bits of the value as a double (0.0 for both zeros).
    Number(u64),
    Text(String),
}

impl LiteralBuckets {
    /// Groups the literal values of `keys` (row `i` has value `keys[i]`).
    pub fn new(
        ctx: &QueryContext,
        keys: impl Iterator<Item = (u32, Id)>,
    ) -> Result<LiteralBuckets, EngineError> {
        let mut buckets = LiteralBuckets::default();
        for (row, id) in keys {
            let Some(literal @ Term::Literal(_)) = ctx.term(id)? else {
                continue;
            };
            match value_key(&literal) {
                Some(key) => buckets.by_value.entry(key).or_default().push(row),
                None => buckets.others.push(row),
            }
        }
        buckets.only_strings = buckets.others.is_empty()
            && buckets
                .by_value
                .keys()
                .all(|key| matches!(key, ValueKey::Text(_)));
        Ok(buckets)
    }

    /// Whether every literal of the build side is a string (simple,
    /// `xsd:string` or language-tagged). `=` with a string is then true only
    /// for the same term, so a literal probe value needs no decoding: its
    /// ID finds the rows equal to it.
    pub fn only_strings(&self) -> bool {
        self.only_strings
    }

    /// The rows that may be equal to the literal `id`.
    pub fn candidates(&self, ctx: &QueryContext, id: Id) -> Result<&[u32], EngineError> {
        let Some(literal @ Term::Literal(_)) = ctx.term(id)? else {
            return Ok(&[]);
        };
        Ok(match value_key(&literal) {
            Some(key) => self.by_value.get(&key).map_or(&[], Vec::as_slice),
            None => &self.others,
        })
    }
}

/// The group of a literal; `None`: the others.
fn value_key(literal: &Term) -> Option<ValueKey> {
    if let Term::Literal(l) = literal {
        if l.datatype() == xsd::STRING || l.datatype() == rdf::LANG_STRING {
            return Some(ValueKey::Text(l.value().to_owned()));
        }
    }
    // An ill-typed number ("abc"^^xsd:integer) is equal to nothing but
    // itself, and other kinds of literals compare by value in their own
    // ways: they go with the others.
    let value = numeric_double(literal)?;
    let value = if value == 0.0 { 0.0 } else { value };
    Some(ValueKey::Number(value.to_bits()))
}
