//! The entailment regimes of SPARQL 1.1 (`sd:entailmentRegime` in the
//! suites' manifests) that Tern's query-time inference answers under, and
//! the suites run under them.

use crate::runner::Suite;
use std::path::Path;
use tern_engine::Inference;

/// The namespace of the entailment regimes' IRIs.
pub const ENT: &str = "http://www.w3.org/ns/entailment/";

/// An entailment regime and the inference mode Tern answers it with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Regime {
    /// The regime's IRI, as the tests list it.
    pub iri: &'static str,
    pub inference: Inference,
}

/// The RDFS entailment regime, answered by Tern's RDFS inference.
pub const RDFS: Regime = Regime {
    iri: "http://www.w3.org/ns/entailment/RDFS",
    inference: Inference::Rdfs,
};

/// The entailment suites, under the test-suite root (`.../w3c-sparql`): the
/// SPARQL 1.1 entailment tests that list the RDFS regime, run under it
/// (the others are skipped).
pub fn entailment_suites(root: &Path) -> Vec<Suite> {
    vec![Suite {
        name: "sparql11-entail-rdfs",
        manifest: root.join("sparql11/entailment/manifest.ttl"),
        root: root.to_owned(),
        regime: Some(RDFS),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regime_iris_are_in_the_namespace() {
        assert_eq!(RDFS.iri.strip_prefix(ENT), Some("RDFS"));
    }
}
