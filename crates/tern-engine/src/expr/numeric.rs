//! Numeric values: type promotion (integer < decimal < float < double),
//! arithmetic (spec 17.3 operator mapping onto XPath `op:numeric-*`), and
//! `ABS`, `CEIL`, `FLOOR`, `ROUND`.
//!
//! Integers are 64-bit (`oxsdatatypes::Integer`): an overflow is an
//! expression error rather than a silent wrap or a switch to decimal.

use super::value::{term_value, typed_literal, Value};
use oxrdf::vocab::xsd;
use oxrdf::Term;
use oxsdatatypes::{Decimal, Double, Float, Integer};
use std::cmp::Ordering;

/// A numeric value of one of the four primitive numeric types (derived
/// integer types such as `xsd:int` are plain integers here).
#[derive(Debug, Clone, Copy)]
pub(super) enum Numeric {
    Integer(Integer),
    Decimal(Decimal),
    Float(Float),
    Double(Double),
}

/// Two operands promoted to their common type.
enum Promoted {
    Integer(Integer, Integer),
    Decimal(Decimal, Decimal),
    Float(Float, Float),
    Double(Double, Double),
}

impl Numeric {
    /// The numeric value of a term; `None` for non-numeric or ill-typed terms.
    pub(super) fn from_term(term: &Term) -> Option<Self> {
        match term_value(term)? {
            Value::Numeric(numeric) => Some(numeric),
            _ => None,
        }
    }

    /// The canonical literal for this value, typed with its primitive type.
    pub(super) fn into_term(self) -> Term {
        let datatype = match self {
            Self::Integer(_) => xsd::INTEGER,
            Self::Decimal(_) => xsd::DECIMAL,
            Self::Float(_) => xsd::FLOAT,
            Self::Double(_) => xsd::DOUBLE,
        };
        typed_literal(self.lexical(), datatype)
    }

    /// The lexical form: canonical for integers and decimals, Rust's
    /// shortest round-trip form (with `INF`, `-INF`, `NaN`) for floats and
    /// doubles.
    pub(super) fn lexical(self) -> String {
        match self {
            Self::Integer(v) => v.to_string(),
            Self::Decimal(v) => v.to_string(),
            Self::Float(v) => v.to_string(),
            Self::Double(v) => v.to_string(),
        }
    }

    /// The value as a double (used by SUBSTR positions, ORDER BY and the
    /// value groups of equality joins).
    pub(super) fn to_double(self) -> Double {
        match self {
            Self::Integer(v) => v.into(),
            Self::Decimal(v) => v.into(),
            Self::Float(v) => v.into(),
            Self::Double(v) => v,
        }
    }

    /// EBV of a numeric: false for zero and NaN.
    pub(super) fn is_true(self) -> bool {
        match self {
            Self::Integer(v) => v != Integer::from(0),
            Self::Decimal(v) => v != Decimal::from(0),
            Self::Float(v) => !v.is_nan() && v != Float::from(0_u8),
            Self::Double(v) => !v.is_nan() && v != Double::from(0_u8),
        }
    }
}

/// Promotes both operands to the higher of their two types (XPath numeric
/// type promotion).
fn promote(a: Numeric, b: Numeric) -> Promoted {
    use Numeric as N;
    match (a, b) {
        (N::Integer(a), N::Integer(b)) => Promoted::Integer(a, b),
        (N::Integer(a), N::Decimal(b)) => Promoted::Decimal(a.into(), b),
        (N::Decimal(a), N::Integer(b)) => Promoted::Decimal(a, b.into()),
        (N::Decimal(a), N::Decimal(b)) => Promoted::Decimal(a, b),
        (N::Integer(a), N::Float(b)) => Promoted::Float(a.into(), b),
        (N::Float(a), N::Integer(b)) => Promoted::Float(a, b.into()),
        (N::Decimal(a), N::Float(b)) => Promoted::Float(a.into(), b),
        (N::Float(a), N::Decimal(b)) => Promoted::Float(a, b.into()),
        (N::Float(a), N::Float(b)) => Promoted::Float(a, b),
        (a, b) => Promoted::Double(a.to_double(), b.to_double()),
    }
}

/// `op:numeric-add`.
pub(super) fn add(a: Numeric, b: Numeric) -> Option<Numeric> {
    Some(match promote(a, b) {
        Promoted::Integer(a, b) => Numeric::Integer(a.checked_add(b)?),
        Promoted::Decimal(a, b) => Numeric::Decimal(a.checked_add(b)?),
        Promoted::Float(a, b) => Numeric::Float(a + b),
        Promoted::Double(a, b) => Numeric::Double(a + b),
    })
}

/// `op:numeric-subtract`.
pub(super) fn subtract(a: Numeric, b: Numeric) -> Option<Numeric> {
    Some(match promote(a, b) {
        Promoted::Integer(a, b) => Numeric::Integer(a.checked_sub(b)?),
        Promoted::Decimal(a, b) => Numeric::Decimal(a.checked_sub(b)?),
        Promoted::Float(a, b) => Numeric::Float(a - b),
        Promoted::Double(a, b) => Numeric::Double(a - b),
    })
}

/// `op:numeric-multiply`.
pub(super) fn multiply(a: Numeric, b: Numeric) -> Option<Numeric> {
    Some(match promote(a, b) {
        Promoted::Integer(a, b) => Numeric::Integer(a.checked_mul(b)?),
        Promoted::Decimal(a, b) => Numeric::Decimal(a.checked_mul(b)?),
        Promoted::Float(a, b) => Numeric::Float(a * b),
        Promoted::Double(a, b) => Numeric::Double(a * b),
    })
}

/// `op:numeric-divide`: integer division yields a decimal (spec 17.3), and
/// division by zero is an error for integer/decimal but IEEE (INF, NaN) for
/// float/double.
pub(super) fn divide(a: Numeric, b: Numeric) -> Option<Numeric> {
    Some(match promote(a, b) {
        Promoted::Integer(a, b) => Numeric::Decimal(Decimal::from(a).checked_div(b)?),
        Promoted::Decimal(a, b) => Numeric::Decimal(a.checked_div(b)?),
        Promoted::Float(a, b) => Numeric::Float(a / b),
        Promoted::Double(a, b) => Numeric::Double(a / b),
    })
}

/// The XPath value comparison (`op:numeric-less-than` & co.): `None` when
/// a NaN is involved, in which case every comparison is false.
pub(super) fn compare(a: Numeric, b: Numeric) -> Option<Ordering> {
    match promote(a, b) {
        Promoted::Integer(a, b) => Some(a.cmp(&b)),
        Promoted::Decimal(a, b) => Some(a.cmp(&b)),
        Promoted::Float(a, b) => a.partial_cmp(&b),
        Promoted::Double(a, b) => a.partial_cmp(&b),
    }
}

/// `op:numeric-unary-minus`.
pub(super) fn negate(a: Numeric) -> Option<Numeric> {
    Some(match a {
        Numeric::Integer(v) => Numeric::Integer(v.checked_neg()?),
        Numeric::Decimal(v) => Numeric::Decimal(v.checked_neg()?),
        Numeric::Float(v) => Numeric::Float(-v),
        Numeric::Double(v) => Numeric::Double(-v),
    })
}

/// `fn:abs`.
pub(super) fn abs(a: Numeric) -> Option<Numeric> {
    Some(match a {
        Numeric::Integer(v) => Numeric::Integer(v.checked_abs()?),
        Numeric::Decimal(v) => Numeric::Decimal(v.checked_abs()?),
        Numeric::Float(v) => Numeric::Float(v.abs()),
        Numeric::Double(v) => Numeric::Double(v.abs()),
    })
}

/// `fn:ceiling`.
pub(super) fn ceil(a: Numeric) -> Option<Numeric> {
    Some(match a {
        Numeric::Integer(v) => Numeric::Integer(v),
        Numeric::Decimal(v) => Numeric::Decimal(v.checked_ceil()?),
        Numeric::Float(v) => Numeric::Float(v.ceil()),
        Numeric::Double(v) => Numeric::Double(v.ceil()),
    })
}

/// `fn:floor`.
pub(super) fn floor(a: Numeric) -> Option<Numeric> {
    Some(match a {
        Numeric::Integer(v) => Numeric::Integer(v),
        Numeric::Decimal(v) => Numeric::Decimal(v.checked_floor()?),
        Numeric::Float(v) => Numeric::Float(v.floor()),
        Numeric::Double(v) => Numeric::Double(v.floor()),
    })
}

/// `fn:round`: halves round toward positive infinity (-2.5 → -2).
pub(super) fn round(a: Numeric) -> Option<Numeric> {
    Some(match a {
        Numeric::Integer(v) => Numeric::Integer(v),
        Numeric::Decimal(v) => Numeric::Decimal(v.checked_round()?),
        Numeric::Float(v) => Numeric::Float(v.round()),
        Numeric::Double(v) => Numeric::Double(v.round()),
    })
}

/// The numeric value of a term as a double; `None` for non-numeric and
/// ill-typed terms. Equal numbers have equal doubles.
pub fn numeric_double(term: &Term) -> Option<f64> {
    Numeric::from_term(term).map(|n| f64::from(n.to_double()))
}

#[cfg(test)]
mod tests {
    use crate::expr::test_util::{eval, lit};

    #[test]
    fn promotion() {
        assert_eq!(eval("1 + 1.5"), lit("2.5", "decimal"));
        assert_eq!(eval("1 + 2"), lit("3", "integer"));
        assert_eq!(eval("xsd:int(\"1\") + 1"), lit("2", "integer"));
        assert_eq!(eval("\"1\"^^xsd:int + 1"), lit("2", "integer"));
        assert_eq!(eval("\"1\"^^xsd:unsignedByte * 3"), lit("3", "integer"));
        assert_eq!(eval("1.5 + xsd:float(\"1\")"), lit("2.5", "float"));
        assert_eq!(eval("1 + 1.0e0"), lit("2", "double"));
        assert_eq!(eval("xsd:float(\"1\") + 1e0"), lit("2", "double"));
        assert_eq!(eval("2 * 0.25"), lit("0.5", "decimal"));
        assert_eq!(eval("1.5 - 2"), lit("-0.5", "decimal"));
    }

    #[test]
    fn division() {
        assert_eq!(eval("7 / 2"), lit("3.5", "decimal"));
        assert_eq!(eval("6 / 2"), lit("3", "decimal"));
        assert_eq!(eval("1 / 3"), lit("0.333333333333333333", "decimal"));
        assert_eq!(eval("1 / 0"), None);
        assert_eq!(eval("1.0 / 0"), None);
        assert_eq!(eval("1 / 0e0"), lit("INF", "double"));
        assert_eq!(eval("-1 / 0e0"), lit("-INF", "double"));
        assert_eq!(eval("0 / 0e0"), lit("NaN", "double"));
    }

    #[test]
    fn errors_and_overflow() {
        assert_eq!(eval("1 + \"1\""), None);
        assert_eq!(eval("1 + \"abc\"^^xsd:integer"), None);
        assert_eq!(eval("9223372036854775807 + 1"), None);
        assert_eq!(eval("-\"a\""), None);
    }

    #[test]
    fn unary() {
        assert_eq!(eval("-(3)"), lit("-3", "integer"));
        assert_eq!(eval("+\"03\"^^xsd:short"), lit("3", "integer"));
        assert_eq!(eval("-1.5"), lit("-1.5", "decimal"));
        assert_eq!(eval("-(-2.5e0)"), lit("2.5", "double"));
    }

    #[test]
    fn rounding_functions() {
        assert_eq!(eval("ABS(-3)"), lit("3", "integer"));
        assert_eq!(eval("ABS(-1.5)"), lit("1.5", "decimal"));
        assert_eq!(eval("ABS(-1.5e0)"), lit("1.5", "double"));
        assert_eq!(eval("CEIL(1.1)"), lit("2", "decimal"));
        assert_eq!(eval("CEIL(-1.1)"), lit("-1", "decimal"));
        assert_eq!(eval("FLOOR(-1.1)"), lit("-2", "decimal"));
        assert_eq!(eval("FLOOR(1.9e0)"), lit("1", "double"));
        assert_eq!(eval("ROUND(2.5)"), lit("3", "decimal"));
        assert_eq!(eval("ROUND(-2.5)"), lit("-2", "decimal"));
        assert_eq!(eval("ROUND(-2.6)"), lit("-3", "decimal"));
        assert_eq!(eval("ROUND(-2.5e0)"), lit("-2", "double"));
        assert_eq!(eval("ROUND(2.4999e0)"), lit("2", "double"));
        assert_eq!(eval("ROUND(7)"), lit("7", "integer"));
        assert_eq!(eval("ROUND(\"7\")"), None);
    }
}
