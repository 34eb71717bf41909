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
use crate::EngineError;
use oxrdf::vocab::{rdf, xsd};
use oxrdf::{Literal, Term};
use rustc_hash::FxHashMap;
use tern_index::Id;

/// Which build rows a literal probe value is compared with.
#[derive(Default)]
pub struct LiteralBuckets {
    by_value: FxHashMap<ValueKey, Vec<u32>>,
    others: Vec<u32>,
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
            let Some(Term::Literal(literal)) = ctx.term(id)? else {
                continue;
            };
            match value_key(&literal) {
                Some(key) => buckets.by_value.entry(key).or_default().push(row),
                None => buckets.others.push(row),
            }
        }
        Ok(buckets)
    }

    /// The rows that may be equal to the literal `id`.
    pub fn candidates(&self, ctx: &QueryContext, id: Id) -> Result<&[u32], EngineError> {
        let Some(Term::Literal(literal)) = ctx.term(id)? else {
            return Ok(&[]);
        };
        Ok(match value_key(&literal) {
            Some(key) => self.by_value.get(&key).map_or(&[], Vec::as_slice),
            None => &self.others,
        })
    }
}

fn value_key(literal: &Literal) -> Option<ValueKey> {
    let datatype = literal.datatype();
    if datatype == xsd::STRING || datatype == rdf::LANG_STRING {
        return Some(ValueKey::Text(literal.value().to_owned()));
    }
    if !is_numeric(datatype.as_str()) {
        return None;
    }
    // An ill-typed number ("abc"^^xsd:integer) is equal to nothing but
    // itself: it goes with the others.
    let value: f64 = literal.value().trim().parse().ok()?;
    let value = if value == 0.0 { 0.0 } else { value };
    Some(ValueKey::Number(value.to_bits()))
}

fn is_numeric(datatype: &str) -> bool {
    let Some(local) = datatype.strip_prefix("http://www.w3.org/2001/XMLSchema#") else {
        return false;
    };
    matches!(
        local,
        "integer"
            | "decimal"
            | "float"
            | "double"
            | "nonPositiveInteger"
            | "negativeInteger"
            | "long"
            | "int"
            | "short"
            | "byte"
            | "nonNegativeInteger"
            | "unsignedLong"
            | "unsignedInt"
            | "unsignedShort"
            | "unsignedByte"
            | "positiveInteger"
    )
}
