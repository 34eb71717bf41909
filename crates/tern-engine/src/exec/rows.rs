//! Helpers for operators that look at whole solutions: compatibility and
//! merging of rows under SPARQL's rules for unbound variables.

use oxrdf::Variable;
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
            .map(|&source| Solution::merged(left, right, source))
            .collect()
    }

    /// One column of the merged row: the left value where bound, else the
    /// right one.
    pub fn merged(left: &[Id], right: &[Id], (l, r): (Option<usize>, Option<usize>)) -> Id {
        let a = l.map_or(Id::UNDEFINED, |i| left[i]);
        if a != Id::UNDEFINED {
            a
        } else {
            r.map_or(Id::UNDEFINED, |j| right[j])
        }
    }
}
