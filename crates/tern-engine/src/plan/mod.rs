//! Planning: from `spargebra`'s algebra to a tree of physical operators.
//!
//! - `planner`: the [`Planner`], one operator per algebra node;
//! - `bgp`: basic graph patterns, resolved, estimated and joined in the
//!   order `join_order` picks (exact row counts per pattern from the index,
//!   distinct values per variable from the predicate statistics; dynamic
//!   programming over join trees for small patterns, greedy beyond), with
//!   `join_sample` measuring joins the statistics cannot see;
//! - `group_merge`: joins of basic graph patterns (and UNIONs of them) as
//!   one pattern, so that one join order covers them all;
//! - `constant_filter`: `FILTER(?v = <c>)` and `IN` as constants in the
//!   pattern; `values_filter`: a few IRIs of VALUES as such an `IN`;
//! - `filter`, `exists`: FILTER, with (NOT) EXISTS as semi (anti) joins
//!   where that is exact; `exists_per_row` plans the pattern per solution
//!   elsewhere; `value_range`: comparisons with constants as scan ranges;
//!   `decode_order`: a lone pattern whose object a filter decodes, scanned
//!   in object order;
//!   `equality_join`: `FILTER(?a = ?b)` as a join; `seeded_filter`:
//!   comparisons with a few-row part's values as ranges of the rest,
//!   planned per row of that part;
//! - `unbound_negation`: `OPTIONAL {..} FILTER(!bound(?v))` as NOT EXISTS;
//! - `optional`, `correlated`: OPTIONAL as one left join or per left row;
//! - `per_graph`: `GRAPH ?g` planned once per named graph where needed;
//! - `path_service`: `SERVICE <urn:tern:path>` blocks as shortest-path
//!   searches;
//! - `union_leaf`: DISTINCT unions of triple patterns (what inference
//!   makes of an extended pattern) as leaves of a group's join order;
//!   `subsumed_branches` leaves out, for the rewriting, the branches of
//!   such a union that another branch answers;
//!   `rows_leaf`: other parts of a join (subqueries) as leaves, where the
//!   join as written would be a cross product.
//!
//! Uses the operators (`exec`), expressions (`expr`) and the query context;
//! the query runtime (`run`) uses it.

mod bgp;
mod constant_filter;
mod correlated;
mod decode_order;
mod equality_join;
mod exists;
mod exists_per_row;
mod filter;
mod group_merge;
mod join_order;
mod join_sample;
mod optional;
mod order_keys;
mod parallel;
mod parallel_group;
mod path_service;
mod per_graph;
mod planner;
mod rows_leaf;
mod seeded_filter;
mod subsumed_branches;
mod unbound_negation;
mod union_chain;
mod union_leaf;
mod value_range;
mod values_filter;

pub use optional::OptionalJoins;
pub use planner::{GraphContext, Planner, SYNONYMS_SERVICE};
pub(crate) use subsumed_branches::without_subsumed_branches;
pub(crate) use union_chain::union_chain;
