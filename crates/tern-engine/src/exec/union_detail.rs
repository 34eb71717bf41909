//! What a union of patterns reads, as EXPLAIN shows it. The text is
//! written only when a plan is shown: it decodes the patterns' constants,
//! which on a short inferred query cost a fifth of its planning
//! (q14 of the inference benchmark, 30 patterns) for text nobody reads.

use super::scan::describe_pattern;
use super::union_of_patterns::UnionOfPatterns;
use crate::context::QueryContext;
use oxrdf::Variable;

/// The branches a description names; the others are counted.
const SHOWN: usize = 3;

/// What is needed to describe a union besides the union itself.
#[derive(Debug, Clone, Default)]
pub struct UnionDetail {
    /// The column variables of the first [`SHOWN`] branches.
    names: Vec<Vec<Variable>>,
    /// Its rows were kept by an earlier query on this snapshot.
    kept: bool,
}

impl UnionDetail {
    /// `branch_variables`: every branch's column variables, in order.
    pub fn new(branch_variables: &[Vec<Variable>], kept: bool) -> UnionDetail {
        UnionDetail {
            names: branch_variables.iter().take(SHOWN).cloned().collect(),
            kept,
        }
    }

    pub fn describe(&self, ctx: &QueryContext, union: &UnionOfPatterns) -> String {
        let mut parts: Vec<String> = (union.branches.iter())
            .zip(&self.names)
            .map(|(b, names)| describe_pattern(ctx, names, &b.pattern))
            .collect();
        let more = union.branches.len().saturating_sub(SHOWN);
        if more > 0 {
            parts.push(format!("{more} more"));
        }
        if !union.complex().is_empty() {
            parts.push(format!("{} complex", union.complex().len()));
        }
        let mut detail = format!(
            "a union of {} patterns ({})",
            union.branches.len(),
            parts.join(" | ")
        );
        if self.kept {
            detail.push_str(", its rows kept from an earlier query on this snapshot");
        }
        detail
    }
}
