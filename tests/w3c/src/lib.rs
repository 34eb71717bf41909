//! The W3C SPARQL test-suite runner for Tern: reads the suites' manifests, loads
//! each test's dataset into a fresh index, runs the query (or the update) on
//! the engine and compares with the expected result (or store). The SPARQL 1.1
//! entailment tests run under Tern's query-time inference ([`entailment`]).
//! Used by `tests/suite.rs`.

pub mod check;
pub mod compare;
pub mod entailment;
pub mod load;
pub mod manifest;
pub mod report;
pub mod results;
pub mod runner;
pub mod update;
