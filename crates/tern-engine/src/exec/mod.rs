//! Physical operators, one per file. Each pulls batches of ID columns from its
//! inputs and produces batches for its parent; every operator checks the
//! query's cancellation flag and deadline once per batch, and can save its
//! state between two batches and be rebuilt from it (the [`Operator`] trait,
//! in `operator`; batches in `batch`; runtime information in `profile`).
//!
//! Uses expressions (`expr`), the query context and the preemption contract
//! (`suspend`); the planner (`plan`) builds trees of these operators and the
//! query runtime (`run`) drives them.

mod batch;
mod bind_left_join;
mod build_side;
mod condition;
mod construct;
mod cursor;
mod describe;
mod distinct;
mod distinct_rows;
mod equality_join;
mod extend;
mod filter;
mod flat_rows;
mod group;
mod handed_rows;
mod hash_join;
mod index_join;
mod integer_comparison;
mod join_inputs;
mod left_join;
mod literal_buckets;
mod measured;
mod merge_join;
mod minus;
mod morsel_filter;
mod operator;
mod order_by;
mod parallel_group;
mod parallel_lookups;
mod parallel_pipelines;
mod path;
mod pattern_rows;
mod profile;
mod project;
mod row_table;
mod rows;
mod scan;
mod semi_join;
mod shortest_path;
mod slice;
mod solution_index;
mod sort_steps;
mod spill;
mod synonyms;
mod union;
mod union_detail;
mod union_index_join;
mod union_of_patterns;
mod union_scan;
mod union_star;
mod union_whole_scan;
mod values;

pub use batch::{batch_of, map_indexes, map_rows, next_chunk, Batch, BatchRamp, BATCH_ROWS};
pub use bind_left_join::{BindLeftJoin, PlanRight};
pub use build_side::{BuildSide, Collector, Pulled, COLLECTING};
pub use construct::{copies_its_pattern, Construct};
pub use describe::Describe;
pub use distinct::Distinct;
pub use equality_join::EqualityJoin;
pub use extend::Extend;
pub use filter::Filter;
pub use flat_rows::FlatRows;
pub use group::Group;
pub use hash_join::HashJoin;
pub use index_join::{IndexJoin, LOOKUP_CACHE_ROWS};
pub use join_inputs::{EmptyBuild, JoinInputs};
pub use left_join::LeftJoin;
pub use measured::Measured;
pub use merge_join::MergeJoin;
pub use minus::Minus;
pub use morsel_filter::MorselFilter;
pub use operator::{
    bound_variable_list, join_detail, restore_materialized, save_materialized, variable_list,
    BoxedOperator, Operator,
};
pub use order_by::OrderBy;
pub use parallel_group::ParallelGroup;
pub use parallel_pipelines::ParallelPipelines;
pub use path::PathScan;
pub use pattern_rows::PatternRows;
pub use profile::{PlanProfile, Profile};
pub use project::Project;
pub use row_table::{RowTable, TableSteps};
pub use rows::Solution;
pub use scan::{GraphScope, PatternTerm, Scan};
pub use semi_join::SemiJoin;
pub use shortest_path::{
    Direction as PathDirection, EdgeKind, Endpoint, Outputs as PathOutputs, PathCount, PathSpec,
    ShortestPath,
};
pub use slice::Slice;
pub use synonyms::Synonyms;
pub use union::Union;
pub use union_detail::UnionDetail;
pub use union_index_join::UnionIndexJoin;
pub use union_of_patterns::{BranchValue, UnionBranch, UnionOfPatterns, MAX_UNION_WIDTH};
pub use union_scan::UnionScan;
pub use values::Values;
