pub mod load;
pub mod query;
pub mod stats;
