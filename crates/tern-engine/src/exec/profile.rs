//! Runtime information per operator: what `--explain` prints and what the
//! server returns. The counters are shared with the running operators, so a
//! snapshot can be taken at any time, during or after the query.

use super::Operator;
use serde::Serialize;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Counters one operator updates as it produces batches.
#[derive(Debug, Default)]
pub struct OperatorStats {
    pub rows: AtomicU64,
    pub batches: AtomicU64,
    /// Time spent in the operator's `next_batch`, its inputs included.
    pub nanos: AtomicU64,
}

/// What an operator says about itself for EXPLAIN.
pub struct OperatorInfo {
    pub name: &'static str,
    pub detail: String,
    /// Index blocks decoded so far (scans only).
    pub blocks_read: Option<Arc<AtomicU64>>,
}

impl OperatorInfo {
    pub fn new(name: &'static str, detail: impl Into<String>) -> OperatorInfo {
        OperatorInfo {
            name,
            detail: detail.into(),
            blocks_read: None,
        }
    }
}

/// One node of the live plan: its description, its planner's estimate and
/// shared handles to its counters.
pub struct ProfileNode {
    pub info: OperatorInfo,
    pub estimated_rows: Option<u64>,
    pub stats: Option<Arc<OperatorStats>>,
    pub children: Vec<ProfileNode>,
}

impl ProfileNode {
    fn snapshot(&self) -> PlanProfile {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        PlanProfile {
            operator: self.info.name.to_owned(),
            detail: self.info.detail.clone(),
            estimated_rows: self.estimated_rows,
            rows: self.stats.as_ref().map_or(0, |s| load(&s.rows)),
            batches: self.stats.as_ref().map_or(0, |s| load(&s.batches)),
            time_ms: self
                .stats
                .as_ref()
                .map_or(0.0, |s| load(&s.nanos) as f64 / 1e6),
            blocks_read: self.info.blocks_read.as_deref().map(load),
            children: self.children.iter().map(ProfileNode::snapshot).collect(),
        }
    }
}

/// The live runtime information of a query's plan. Cheap to clone.
#[derive(Clone)]
pub struct Profile(Arc<ProfileNode>);

impl Profile {
    pub fn of(root: &dyn Operator) -> Profile {
        Profile(Arc::new(root.profile()))
    }

    /// The profile of a query that was not asked to keep one.
    pub fn not_kept() -> Profile {
        Profile(Arc::new(ProfileNode {
            info: OperatorInfo::new("NotKept", "runtime information was not requested"),
            estimated_rows: None,
            stats: None,
            children: Vec::new(),
        }))
    }

    /// The counters as they are now.
    pub fn snapshot(&self) -> PlanProfile {
        self.0.snapshot()
    }
}

/// Runtime information of one operator and its inputs, at one moment.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PlanProfile {
    pub operator: String,
    pub detail: String,
    pub estimated_rows: Option<u64>,
    pub rows: u64,
    pub batches: u64,
    /// Time in this operator, its inputs included.
    pub time_ms: f64,
    pub blocks_read: Option<u64>,
    pub children: Vec<PlanProfile>,
}

impl PlanProfile {
    /// An indented tree, one operator per line.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.write_text(&mut out, 0);
        out
    }

    fn write_text(&self, out: &mut String, depth: usize) {
        let _ = write!(out, "{:indent$}{}", "", self.operator, indent = depth * 2);
        if !self.detail.is_empty() {
            let _ = write!(out, " {}", self.detail);
        }
        let estimate = self
            .estimated_rows
            .map_or_else(|| "?".to_owned(), |e| e.to_string());
        let _ = write!(
            out,
            "  [est {estimate}, rows {}, batches {}, {:.3} ms",
            self.rows, self.batches, self.time_ms
        );
        if let Some(blocks) = self.blocks_read {
            let _ = write!(out, ", blocks {blocks}");
        }
        out.push_str("]\n");
        for child in &self.children {
            child.write_text(out, depth + 1);
        }
    }
}
