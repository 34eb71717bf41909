pub mod bench_queries;
pub mod dump;
pub mod load;
pub mod query;
pub mod serve;
pub mod stats;
