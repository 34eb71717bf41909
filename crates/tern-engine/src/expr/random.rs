//! Functions that make fresh values: `RAND`, `UUID`, `STRUUID`, `BNODE`.

use super::hash::keyed_id;
use super::value::{simple_literal, simple_string, typed_literal};
use oxrdf::vocab::xsd;
use oxrdf::{BlankNode, NamedNode, Term};
use oxsdatatypes::Double;

/// `RAND`: a double in [0, 1).
pub(super) fn rand() -> Term {
    typed_literal(
        Double::from(::rand::random::<f64>()).to_string(),
        xsd::DOUBLE,
    )
}

/// `UUID`: a fresh `urn:uuid:` IRI (version 4).
pub(super) fn uuid() -> Term {
    NamedNode::new_unchecked(format!("urn:uuid:{}", uuid_v4())).into()
}

/// `STRUUID`: the string of a fresh version 4 UUID.
pub(super) fn struuid() -> Term {
    simple_literal(uuid_v4())
}

/// A random RFC 4122 version 4 UUID in its lowercase hyphenated form.
fn uuid_v4() -> String {
    let mut bits = ::rand::random::<u128>();
    // Version 4 in the high nibble of byte 6, variant 10 in byte 8.
    bits = (bits & !(0xF_u128 << 76)) | (0x4_u128 << 76);
    bits = (bits & !(0x3_u128 << 62)) | (0x2_u128 << 62);
    let hex = format!("{bits:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// `BNODE()`: a fresh blank node.
pub(super) fn bnode() -> Term {
    BlankNode::default().into()
}

/// `BNODE(str)`: the node for `str` under this evaluation's random `salt`,
/// so the same string gives the same node within one evaluation and
/// (with overwhelming probability) a different one in any other.
pub(super) fn bnode_named(salt: u128, label: &Term) -> Option<Term> {
    let label = simple_string(label)?;
    Some(BlankNode::new_from_unique_id(keyed_id(salt, label)).into())
}

#[cfg(test)]
mod tests {
    use crate::expr::test_util::{eval, lit, parse_expr, with_context};
    use crate::expr::{effective_boolean_value, evaluate};
    use oxrdf::Term;

    /// The boolean value of `expr`.
    fn is_true(expr: &str) -> Option<bool> {
        match eval(expr)? {
            Term::Literal(l) => Some(l.value() == "true"),
            _ => None,
        }
    }

    #[test]
    fn bnode_same_label_same_node_within_one_evaluation() {
        assert_eq!(is_true("sameTerm(BNODE(\"a\"), BNODE(\"a\"))"), Some(true));
        assert_eq!(is_true("sameTerm(BNODE(\"a\"), BNODE(\"b\"))"), Some(false));
        assert_eq!(is_true("sameTerm(BNODE(), BNODE())"), Some(false));
        assert_eq!(is_true("isBlank(BNODE(\"a\"))"), Some(true));
        assert_eq!(eval("BNODE(\"a\"@en)"), None);
        assert_eq!(eval("BNODE(1)"), None);
        // Another evaluation (another solution) gets another node.
        let expr = parse_expr("BNODE(\"a\")");
        let (a, b) = with_context(|ctx| {
            (
                evaluate(&expr, &|_| None, ctx),
                evaluate(&expr, &|_| None, ctx),
            )
        });
        assert!(a.is_some() && b.is_some() && a != b);
    }

    #[test]
    fn rand_uuid_struuid() {
        let Some(Term::Literal(r)) = eval("RAND()") else {
            panic!("RAND is a literal")
        };
        assert_eq!(
            r.datatype().as_str(),
            "http://www.w3.org/2001/XMLSchema#double"
        );
        let r: f64 = r.value().parse().unwrap();
        assert!((0.0..1.0).contains(&r));

        let Some(Term::NamedNode(u)) = eval("UUID()") else {
            panic!("UUID is an IRI")
        };
        let u = u.as_str().strip_prefix("urn:uuid:").unwrap();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"));
        assert!(u
            .chars()
            .all(|c| c == '-' || c.is_ascii_digit() || ('a'..='f').contains(&c)));

        let Some(s) = eval("STRUUID()") else {
            panic!("STRUUID is a literal")
        };
        assert_eq!(effective_boolean_value(&s), Some(true));
        assert_eq!(eval("STRLEN(STRUUID())"), lit("36", "integer"));
        assert_eq!(is_true("UUID() = UUID()"), Some(false));
    }
}
