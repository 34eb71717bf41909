//! String functions (spec 17.4.3) except `REGEX`/`REPLACE`.
//!
//! "String literal" arguments are simple literals, `xsd:string`s and
//! language-tagged strings; results keep the language tag of the first
//! argument where the spec says so. Lengths and positions count Unicode
//! code points, as XPath does.

use super::numeric::Numeric;
use super::value::{
    boolean_literal, integer_literal, simple_literal, simple_string, string_and_language,
    string_literal,
};
use oxrdf::Term;
use std::fmt::Write;

/// `STRLEN`: the number of characters.
pub(super) fn strlen(term: &Term) -> Option<Term> {
    let (value, _) = string_and_language(term)?;
    Some(integer_literal(i64::try_from(value.chars().count()).ok()?))
}

/// `SUBSTR` with XPath `fn:substring` semantics: the characters at 1-based
/// positions `p` with `round(start) <= p < round(start) + round(length)`,
/// computed in doubles so NaN and infinite bounds give what XPath gives
/// (e.g. `SUBSTR("12345", 0, 3)` is `"12"`, `SUBSTR("12345", 1.5, 2.6)`
/// is `"234"`).
pub(super) fn substr(term: &Term, start: &Term, length: Option<&Term>) -> Option<Term> {
    let (value, language) = string_and_language(term)?;
    let start = f64::from(Numeric::from_term(start)?.to_double().round());
    let end = match length {
        Some(length) => start + f64::from(Numeric::from_term(length)?.to_double().round()),
        None => f64::INFINITY,
    };
    let mut result = String::new();
    let mut position = 1.0_f64;
    for c in value.chars() {
        if position >= end {
            break;
        }
        // Written so that a NaN bound selects nothing.
        if position >= start && position < end {
            result.push(c);
        }
        position += 1.0;
    }
    Some(string_literal(result, language))
}

/// `UCASE`.
pub(super) fn ucase(term: &Term) -> Option<Term> {
    let (value, language) = string_and_language(term)?;
    Some(string_literal(value.to_uppercase(), language))
}

/// `LCASE`.
pub(super) fn lcase(term: &Term) -> Option<Term> {
    let (value, language) = string_and_language(term)?;
    Some(string_literal(value.to_lowercase(), language))
}

/// The two string arguments of `STRSTARTS`, `CONTAINS`, `STRBEFORE`...,
/// when they are "argument compatible": two plain strings, two strings
/// with the same language tag, or a tagged string and a plain one. Returns
/// the two strings and the first one's language.
fn compatible_args<'a>(a: &'a Term, b: &'a Term) -> Option<(&'a str, &'a str, Option<&'a str>)> {
    let (a, language_a) = string_and_language(a)?;
    let (b, language_b) = string_and_language(b)?;
    match (language_a, language_b) {
        (_, None) => Some((a, b, language_a)),
        (Some(x), Some(y)) if x.eq_ignore_ascii_case(y) => Some((a, b, language_a)),
        _ => None,
    }
}

/// `STRSTARTS`.
pub(super) fn str_starts(a: &Term, b: &Term) -> Option<Term> {
    let (a, b, _) = compatible_args(a, b)?;
    Some(boolean_literal(a.starts_with(b)))
}

/// `STRENDS`.
pub(super) fn str_ends(a: &Term, b: &Term) -> Option<Term> {
    let (a, b, _) = compatible_args(a, b)?;
    Some(boolean_literal(a.ends_with(b)))
}

/// `CONTAINS`.
pub(super) fn contains(a: &Term, b: &Term) -> Option<Term> {
    let (a, b, _) = compatible_args(a, b)?;
    Some(boolean_literal(a.contains(b)))
}

/// `STRBEFORE`: the part before the first match, keeping the first
/// argument's language; a simple `""` when there is no match.
pub(super) fn str_before(a: &Term, b: &Term) -> Option<Term> {
    let (a, b, language) = compatible_args(a, b)?;
    Some(match a.find(b) {
        Some(index) => string_literal(&a[..index], language),
        None => simple_literal(""),
    })
}

/// `STRAFTER`: the part after the first match, keeping the first
/// argument's language; a simple `""` when there is no match.
pub(super) fn str_after(a: &Term, b: &Term) -> Option<Term> {
    let (a, b, language) = compatible_args(a, b)?;
    Some(match a.find(b) {
        Some(index) => string_literal(&a[index + b.len()..], language),
        None => simple_literal(""),
    })
}

/// `ENCODE_FOR_URI`: percent-encodes the UTF-8 bytes of everything but the
/// RFC 3986 unreserved characters.
pub(super) fn encode_for_uri(term: &Term) -> Option<Term> {
    let (value, _) = string_and_language(term)?;
    let mut result = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            result.push(char::from(byte));
        } else {
            let _ = write!(result, "%{byte:02X}");
        }
    }
    Some(simple_literal(result))
}

/// `CONCAT`: the language tag is kept only when every argument has the
/// same one; otherwise the result is a simple literal.
pub(super) fn concat(args: &[Term]) -> Option<Term> {
    let mut result = String::new();
    let mut language: Option<Option<&str>> = None;
    for arg in args {
        let (value, arg_language) = string_and_language(arg)?;
        result.push_str(value);
        language = match language {
            None => Some(arg_language),
            Some(previous) if previous == arg_language => Some(previous),
            Some(_) => Some(None),
        };
    }
    Some(string_literal(result, language.flatten()))
}

/// `LANGMATCHES`: RFC 4647 basic filtering, case-insensitive; `"*"`
/// matches any non-empty tag.
pub(super) fn lang_matches(tag: &Term, range: &Term) -> Option<Term> {
    let tag = simple_string(tag)?;
    let range = simple_string(range)?;
    let matches = if range == "*" {
        !tag.is_empty()
    } else {
        tag.eq_ignore_ascii_case(range)
            || (tag.as_bytes().get(range.len()) == Some(&b'-')
                && tag
                    .get(..range.len())
                    .is_some_and(|prefix| prefix.eq_ignore_ascii_case(range)))
    };
    Some(boolean_literal(matches))
}

#[cfg(test)]
mod tests {
    use crate::expr::test_util::{boolean, eval, lang, lit, simple};

    #[test]
    fn length_and_case() {
        assert_eq!(eval("STRLEN(\"chat\")"), lit("4", "integer"));
        assert_eq!(eval("STRLEN(\"chat\"@en)"), lit("4", "integer"));
        assert_eq!(eval("STRLEN(\"été\")"), lit("3", "integer"));
        assert_eq!(eval("STRLEN(1)"), None);
        assert_eq!(eval("UCASE(\"foo\"@en)"), lang("FOO", "en"));
        assert_eq!(eval("UCASE(\"straße\")"), simple("STRASSE"));
        assert_eq!(eval("LCASE(\"BAR\"^^xsd:string)"), simple("bar"));
        assert_eq!(eval("LCASE(<http://A>)"), None);
    }

    #[test]
    fn substr_edge_cases() {
        assert_eq!(eval("SUBSTR(\"foobar\", 4)"), simple("bar"));
        assert_eq!(eval("SUBSTR(\"foobar\"@en, 4, 1)"), lang("b", "en"));
        assert_eq!(eval("SUBSTR(\"motor car\", 6)"), simple(" car"));
        assert_eq!(eval("SUBSTR(\"metadata\", 4, 3)"), simple("ada"));
        assert_eq!(eval("SUBSTR(\"12345\", 1.5, 2.6)"), simple("234"));
        assert_eq!(eval("SUBSTR(\"12345\", 0, 3)"), simple("12"));
        assert_eq!(eval("SUBSTR(\"12345\", 5, -3)"), simple(""));
        assert_eq!(eval("SUBSTR(\"12345\", -3, 5)"), simple("1"));
        assert_eq!(eval("SUBSTR(\"12345\", 0e0/0e0, 3)"), simple(""));
        assert_eq!(eval("SUBSTR(\"12345\", 1, 0e0/0e0)"), simple(""));
        assert_eq!(eval("SUBSTR(\"12345\", -42, 1e0/0e0)"), simple("12345"));
        assert_eq!(eval("SUBSTR(\"12345\", -1e0/0e0, 1e0/0e0)"), simple(""));
        assert_eq!(eval("SUBSTR(\"12345\", 10)"), simple(""));
        assert_eq!(eval("SUBSTR(\"été\", 2, 1)"), simple("t"));
        assert_eq!(eval("SUBSTR(\"abc\", \"1\")"), None);
        assert_eq!(eval("SUBSTR(1, 1)"), None);
    }

    #[test]
    fn starts_ends_contains_compatibility() {
        assert_eq!(eval("STRSTARTS(\"foobar\", \"foo\")"), boolean(true));
        assert_eq!(eval("STRSTARTS(\"foobar\"@en, \"foo\"@en)"), boolean(true));
        assert_eq!(eval("STRSTARTS(\"foobar\"@en, \"foo\")"), boolean(true));
        assert_eq!(
            eval("STRSTARTS(\"foobar\"^^xsd:string, \"foo\")"),
            boolean(true)
        );
        assert_eq!(eval("STRSTARTS(\"foobar\", \"foo\"@en)"), None);
        assert_eq!(eval("STRSTARTS(\"foobar\"@en, \"foo\"@fr)"), None);
        assert_eq!(eval("STRENDS(\"foobar\", \"bar\")"), boolean(true));
        assert_eq!(eval("STRENDS(\"foobar\", \"foo\")"), boolean(false));
        assert_eq!(eval("CONTAINS(\"foobar\"@en, \"oba\")"), boolean(true));
        assert_eq!(eval("CONTAINS(\"foobar\", \"\")"), boolean(true));
        assert_eq!(eval("CONTAINS(1, \"1\")"), None);
    }

    #[test]
    fn strbefore_strafter() {
        assert_eq!(eval("STRBEFORE(\"abc\", \"b\")"), simple("a"));
        assert_eq!(eval("STRBEFORE(\"abc\"@en, \"bc\")"), lang("a", "en"));
        assert_eq!(eval("STRBEFORE(\"abc\"@en, \"b\"@cy)"), None);
        assert_eq!(eval("STRBEFORE(\"abc\"^^xsd:string, \"\")"), simple(""));
        assert_eq!(eval("STRBEFORE(\"abc\", \"xyz\")"), simple(""));
        assert_eq!(eval("STRBEFORE(\"abc\"@en, \"z\"@en)"), simple(""));
        assert_eq!(eval("STRBEFORE(\"abc\"@en, \"\"@en)"), lang("", "en"));
        assert_eq!(eval("STRBEFORE(\"abc\"@en, \"\")"), lang("", "en"));
        assert_eq!(eval("STRAFTER(\"abc\", \"b\")"), simple("c"));
        assert_eq!(eval("STRAFTER(\"abc\"@en, \"ab\")"), lang("c", "en"));
        assert_eq!(eval("STRAFTER(\"abc\"@en, \"b\"@cy)"), None);
        assert_eq!(eval("STRAFTER(\"abc\", \"\")"), simple("abc"));
        assert_eq!(eval("STRAFTER(\"abc\", \"xyz\")"), simple(""));
        assert_eq!(eval("STRAFTER(\"abc\"@en, \"\")"), lang("abc", "en"));
        assert_eq!(eval("STRAFTER(\"été\", \"é\")"), simple("té"));
    }

    #[test]
    fn encode_for_uri() {
        assert_eq!(
            eval("ENCODE_FOR_URI(\"Los Angeles\")"),
            simple("Los%20Angeles")
        );
        assert_eq!(
            eval("ENCODE_FOR_URI(\"Los Angeles\"@en)"),
            simple("Los%20Angeles")
        );
        assert_eq!(
            eval("ENCODE_FOR_URI(\"a/b?c=é~\")"),
            simple("a%2Fb%3Fc%3D%C3%A9~")
        );
    }

    #[test]
    fn concat() {
        assert_eq!(eval("CONCAT(\"foo\", \"bar\")"), simple("foobar"));
        assert_eq!(eval("CONCAT(\"foo\"@en, \"bar\"@en)"), lang("foobar", "en"));
        assert_eq!(eval("CONCAT(\"foo\"@en, \"bar\")"), simple("foobar"));
        assert_eq!(eval("CONCAT(\"foo\"@en, \"bar\"@fr)"), simple("foobar"));
        assert_eq!(
            eval("CONCAT(\"foo\"^^xsd:string, \"bar\")"),
            simple("foobar")
        );
        assert_eq!(eval("CONCAT()"), simple(""));
        assert_eq!(eval("CONCAT(\"a\", 1)"), None);
    }

    #[test]
    fn lang_matches() {
        assert_eq!(eval("LANGMATCHES(\"en\", \"EN\")"), boolean(true));
        assert_eq!(eval("LANGMATCHES(\"en-US\", \"en\")"), boolean(true));
        assert_eq!(eval("LANGMATCHES(\"en\", \"en-US\")"), boolean(false));
        assert_eq!(eval("LANGMATCHES(\"eng\", \"en\")"), boolean(false));
        assert_eq!(eval("LANGMATCHES(\"fr\", \"*\")"), boolean(true));
        assert_eq!(eval("LANGMATCHES(\"\", \"*\")"), boolean(false));
        assert_eq!(
            eval("LANGMATCHES(LANG(\"chat\"@fr-BE), \"fr\")"),
            boolean(true)
        );
        assert_eq!(eval("LANGMATCHES(\"en\"@en, \"en\")"), None);
    }
}
