//! Helpers for operators that look at whole solutions: compatibility and
//! merging of rows under SPARQL's rules for unbound variables.

use oxrdf::Variable;
use rustc_hash::FxHashMap;
use tern_index::Id;

/// For each column of a combined schema, its column in the left and in the
/// right input.
pub type Sources = Vec<(Option<usize>, Option<usize>)>;

/// Rules for combining solutions.
pub struct Solution;

impl Solution {
    /// The union of two schemas, left variables first, and for each output
    /// column its position in the left and in the right input.
    pub fn merge_schemas(left: &[Variable], right: &[Variable]) -> (Vec<Variable>, Sources) {
        let mut variables = left.to_vec();
        let mut sources: Vec<(Option<usize>, Option<usize>)> =
            (0..left.len()).map(|i| (Some(i), None)).collect();
        for (j, v) in right.iter().enumerate() {
            match left.iter().position(|l| l == v) {
                Some(i) => sources[i].1 = Some(j),
                None => {
                    variables.push(v.clone());
                    sources.push((None, Some(j)));
                }
            }
        }
        (variables, sources)
    }

    /// Whether two rows agree on every shared variable bound in both.
    pub fn compatible(left: &[Id], right: &[Id], shared: &[(usize, usize)]) -> bool {
        shared.iter().all(|&(l, r)| {
            let (a, b) = (left[l], right[r]);
            a == Id::UNDEFINED || b == Id::UNDEFINED || a == b
        })
    }

    /// The merged row of two compatible rows.
    pub fn merge(left: &[Id], right: &[Id], sources: &[(Option<usize>, Option<usize>)]) -> Vec<Id> {
        sources
            .iter()
            .map(|&(l, r)| {
                let a = l.map_or(Id::UNDEFINED, |i| left[i]);
                if a != Id::UNDEFINED {
                    a
                } else {
                    r.map_or(Id::UNDEFINED, |j| right[j])
                }
            })
            .collect()
    }
}

/// Rows of a materialized input, indexed by their values on some columns, for
/// joins, OPTIONAL and MINUS. Rows with an unbound key column cannot be hashed:
/// they are kept aside and checked against every probe.
pub struct RowTable {
    pub rows: Vec<Vec<Id>>,
    by_key: FxHashMap<Vec<Id>, Vec<u32>>,
    unkeyed: Vec<u32>,
}

impl RowTable {
    /// Materializes `input`, keyed on its side of the `shared` columns
    /// (pairs of (other input's column, this input's column)).
    pub fn build(
        input: &mut dyn super::Operator,
        shared: &[(usize, usize)],
        ctx: &crate::context::QueryContext,
    ) -> Result<RowTable, crate::EngineError> {
        let rows = super::collect_rows(input, ctx)?;
        Ok(RowTable::new(
            rows,
            shared.iter().map(|&(_, r)| r).collect(),
        ))
    }

    pub fn new(rows: Vec<Vec<Id>>, key_columns: Vec<usize>) -> RowTable {
        let mut by_key: FxHashMap<Vec<Id>, Vec<u32>> = FxHashMap::default();
        let mut unkeyed = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            let key: Vec<Id> = key_columns.iter().map(|&c| row[c]).collect();
            if key.contains(&Id::UNDEFINED) {
                unkeyed.push(i as u32);
            } else {
                by_key.entry(key).or_default().push(i as u32);
            }
        }
        RowTable {
            rows,
            by_key,
            unkeyed,
        }
    }

    /// Indexes of rows that may be compatible with a probe whose key values
    /// (in the order of this table's key columns) are `key`.
    pub fn candidates(&self, key: &[Id]) -> Vec<u32> {
        if key.contains(&Id::UNDEFINED) {
            return (0..self.rows.len() as u32).collect();
        }
        let mut out: Vec<u32> = self.by_key.get(key).cloned().unwrap_or_default();
        out.extend_from_slice(&self.unkeyed);
        out
    }
}

impl RowTable {
    /// The state of a join's materialized side: the table once built (stashed),
    /// the state of the input that builds it before.
    pub fn save(
        table: &mut Option<RowTable>,
        build: Option<&mut super::BoxedOperator>,
        stash: &crate::suspend::Stash,
    ) -> Result<crate::suspend::OperatorState, crate::EngineError> {
        match (table.take(), build) {
            (Some(table), _) => Ok(crate::suspend::OperatorState::stashed(stash.put(table))),
            (None, Some(build)) => build.save(stash),
            (None, None) => Err(crate::suspend::bad_state("join without its build side")),
        }
    }

    /// Restores what [`save`](Self::save) saved.
    pub fn restore(
        state: crate::suspend::OperatorState,
        table: &mut Option<RowTable>,
        build: &mut Option<super::BoxedOperator>,
        stash: &crate::suspend::Stash,
    ) -> Result<(), crate::EngineError> {
        match (state.stashed, build.as_mut()) {
            (Some(handle), _) => {
                *table = Some(stash.take(handle)?);
                *build = None;
                Ok(())
            }
            (None, Some(input)) => input.restore(state, stash),
            (None, None) => Err(crate::suspend::bad_state("join without its build side")),
        }
    }
}
