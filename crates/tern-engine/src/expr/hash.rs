//! Hash functions: `MD5`, `SHA1`, `SHA256`, `SHA384`, `SHA512` (hex of the
//! UTF-8 bytes of a simple string), and the keyed hash behind `BNODE(str)`.

use super::value::{simple_literal, simple_string};
use oxrdf::Term;
use sha2::Digest;
use std::fmt::Write;

#[derive(Debug, Clone, Copy)]
pub(super) enum Algorithm {
    Md5,
    Sha1,
    Sha256,
    Sha384,
    Sha512,
}

/// The lowercase hex digest of a simple literal or `xsd:string` (the spec
/// accepts no language-tagged string here).
pub(super) fn digest(algorithm: Algorithm, term: &Term) -> Option<Term> {
    let input = simple_string(term)?.as_bytes();
    Some(simple_literal(match algorithm {
        Algorithm::Md5 => hex(&md5::Md5::digest(input)),
        Algorithm::Sha1 => hex(&sha1::Sha1::digest(input)),
        Algorithm::Sha256 => hex(&sha2::Sha256::digest(input)),
        Algorithm::Sha384 => hex(&sha2::Sha384::digest(input)),
        Algorithm::Sha512 => hex(&sha2::Sha512::digest(input)),
    }))
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// A 128-bit id for `label` under `salt`: SHA-256 of both, truncated. A
/// cryptographic hash keeps ids of different labels (or salts) apart.
pub(super) fn keyed_id(salt: u128, label: &str) -> u128 {
    let mut hasher = sha2::Sha256::new();
    hasher.update(salt.to_le_bytes());
    hasher.update(label.as_bytes());
    let digest = hasher.finalize();
    let mut id = [0; 16];
    id.copy_from_slice(&digest[..16]);
    u128::from_le_bytes(id)
}

#[cfg(test)]
mod tests {
    use super::keyed_id;
    use crate::expr::test_util::{eval, simple};

    #[test]
    fn hashes_of_abc() {
        assert_eq!(
            eval("MD5(\"abc\")"),
            simple("900150983cd24fb0d6963f7d28e17f72")
        );
        assert_eq!(
            eval("SHA1(\"abc\")"),
            simple("a9993e364706816aba3e25717850c26c9cd0d89d")
        );
        assert_eq!(
            eval("SHA256(\"abc\")"),
            simple("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        );
        assert_eq!(
            eval("SHA384(\"abc\")"),
            simple(
                "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed\
                 8086072ba1e7cc2358baeca134c825a7"
            )
        );
        assert_eq!(
            eval("SHA512(\"abc\")"),
            simple(
                "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a\
                 2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
            )
        );
        assert_eq!(eval("MD5(\"abc\"^^xsd:string)"), eval("MD5(\"abc\")"));
        assert_eq!(eval("MD5(\"abc\"@en)"), None);
        assert_eq!(eval("MD5(1)"), None);
        assert_eq!(eval("SHA1(<http://a>)"), None);
    }

    #[test]
    fn keyed_ids_depend_on_salt_and_label() {
        assert_eq!(keyed_id(1, "a"), keyed_id(1, "a"));
        assert_ne!(keyed_id(1, "a"), keyed_id(2, "a"));
        assert_ne!(keyed_id(1, "a"), keyed_id(1, "b"));
    }
}
