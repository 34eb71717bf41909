pub mod bench_queries;
pub mod load;
pub mod query;
pub mod serve;
pub mod stats;
