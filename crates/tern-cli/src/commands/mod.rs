pub mod load;
pub mod stats;
