//! `REGEX` and `REPLACE`: XPath regular expressions (XPath Functions 3.1,
//! section 5.6) run on the `regex` crate.
//!
//! The XPath syntax is translated where the two dialects differ: flags
//! `s m i x q`, `.` not matching `\r`, the XPath meanings of `\s`, `\w`,
//! `\i`, `\c`, character class subtraction `[a-z-[aeiou]]`, and `$N` in
//! replacements. Back-references (`\1`) and Unicode block escapes
//! (`\p{IsBasicLatin}`) have no `regex` equivalent: such patterns are
//! errors.

use super::value::{boolean_literal, simple_string, string_and_language, string_literal};
use oxrdf::Term;
use regex::{NoExpand, Regex, RegexBuilder};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write;
use std::rc::Rc;

/// `REGEX(text, pattern[, flags])`.
pub(super) fn regex(text: &Term, pattern: &Term, flags: Option<&Term>) -> Option<Term> {
    let (text, _) = string_and_language(text)?;
    let regex = compile(simple_string(pattern)?, flags_of(flags)?)?;
    Some(boolean_literal(regex.is_match(text)))
}

/// `REPLACE(text, pattern, replacement[, flags])`; the result keeps the
/// text's language tag. A pattern that matches the empty string is an
/// error (XPath FORX0003).
pub(super) fn replace(
    text: &Term,
    pattern: &Term,
    replacement: &Term,
    flags: Option<&Term>,
) -> Option<Term> {
    let (text, language) = string_and_language(text)?;
    let flags = flags_of(flags)?;
    let regex = compile(simple_string(pattern)?, flags)?;
    if regex.is_match("") {
        return None;
    }
    let replacement = simple_string(replacement)?;
    let result = if flags.contains('q') {
        regex.replace_all(text, NoExpand(replacement))
    } else {
        let replacement = translate_replacement(replacement, regex.captures_len() - 1)?;
        regex.replace_all(text, replacement.as_str())
    };
    Some(string_literal(result, language))
}

/// The flags argument: a simple string of XPath flag letters.
fn flags_of(flags: Option<&Term>) -> Option<&str> {
    let flags = match flags {
        Some(flags) => simple_string(flags)?,
        None => "",
    };
    flags
        .chars()
        .all(|c| matches!(c, 's' | 'm' | 'i' | 'x' | 'q'))
        .then_some(flags)
}

/// A pattern compiled with each set of flags it was asked with (`None`: it
/// does not compile).
type ByFlags = HashMap<String, Option<Rc<Regex>>>;

thread_local! {
    /// Compiled patterns by pattern, then flags: a FILTER runs the same few
    /// patterns on every solution, and compiling is far costlier than
    /// matching. Failures are cached too. Two levels so that a lookup
    /// borrows the strings instead of allocating a key. Shared, not cloned:
    /// a clone of a `Regex` starts with no search caches of its own, and
    /// building them again for every row took half the time of a REGEX
    /// filter (and most of its allocations).
    static CACHE: RefCell<HashMap<String, ByFlags>> =
        RefCell::new(HashMap::new());
}

/// Bounds the cache (in patterns); patterns built from data could
/// otherwise grow it without limit.
const CACHE_CAPACITY: usize = 256;

fn compile(pattern: &str, flags: &str) -> Option<Rc<Regex>> {
    let cached = CACHE.with(|cache| {
        cache
            .borrow()
            .get(pattern)
            .and_then(|by_flags| by_flags.get(flags).cloned())
    });
    if let Some(cached) = cached {
        return cached;
    }
    let regex = translate(pattern, flags).and_then(|translated| {
        RegexBuilder::new(&translated)
            .case_insensitive(flags.contains('i'))
            .multi_line(flags.contains('m'))
            .dot_matches_new_line(flags.contains('s'))
            .build()
            .ok()
            .map(Rc::new)
    });
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() >= CACHE_CAPACITY && !cache.contains_key(pattern) {
            cache.clear();
        }
        cache
            .entry(pattern.to_owned())
            .or_default()
            .insert(flags.to_owned(), regex.clone());
    });
    regex
}

/// XML 1.0 `NameStartChar` (for `\i`) as the body of a `regex` class.
const NAME_START: &str = ":A-Z_a-z\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{2FF}\\x{370}-\\x{37D}\
     \\x{37F}-\\x{1FFF}\\x{200C}-\\x{200D}\\x{2070}-\\x{218F}\\x{2C00}-\\x{2FEF}\
     \\x{3001}-\\x{D7FF}\\x{F900}-\\x{FDCF}\\x{FDF0}-\\x{FFFD}\\x{10000}-\\x{EFFFF}";
/// What XML 1.0 `NameChar` (for `\c`) adds to `NameStartChar`.
const NAME_EXTRA: &str = "\\-.0-9\\x{B7}\\x{300}-\\x{36F}\\x{203F}-\\x{2040}";

/// Translates an XPath pattern into `regex` syntax; `None` for constructs
/// `regex` cannot express or a malformed pattern.
fn translate(pattern: &str, flags: &str) -> Option<String> {
    if flags.contains('q') {
        return Some(regex::escape(pattern));
    }
    let extended = flags.contains('x');
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars().peekable();
    // Depth of character classes ([...], nested by subtraction).
    let mut class_depth = 0_usize;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let escaped = chars.next()?;
                // The replacements are bracketed classes, which `regex`
                // accepts both alone and nested inside another class.
                match escaped {
                    // XPath \s is XML whitespace only; \w is "not
                    // punctuation, separator or other".
                    's' => out.push_str("[\\x20\\t\\n\\r]"),
                    'S' => out.push_str("[^\\x20\\t\\n\\r]"),
                    'w' => out.push_str("[^\\p{P}\\p{Z}\\p{C}]"),
                    'W' => out.push_str("[\\p{P}\\p{Z}\\p{C}]"),
                    'i' => {
                        let _ = write!(out, "[{NAME_START}]");
                    }
                    'I' => {
                        let _ = write!(out, "[^{NAME_START}]");
                    }
                    'c' => {
                        let _ = write!(out, "[{NAME_START}{NAME_EXTRA}]");
                    }
                    'C' => {
                        let _ = write!(out, "[^{NAME_START}{NAME_EXTRA}]");
                    }
                    // Back-references: unsupported by `regex`.
                    '0'..='9' => return None,
                    other => {
                        out.push('\\');
                        out.push(other);
                    }
                }
            }
            '[' => {
                class_depth += 1;
                out.push('[');
            }
            ']' if class_depth > 0 => {
                class_depth -= 1;
                out.push(']');
            }
            // XPath class subtraction `[a-z-[aeiou]]` is `regex`'s `--`.
            '-' if class_depth > 0 && chars.peek() == Some(&'[') => out.push_str("--"),
            // `&&` and `~~` are set operators in `regex` classes, plain
            // characters in XPath.
            '&' | '~' if class_depth > 0 => {
                out.push('\\');
                out.push(c);
            }
            // Without the s flag XPath's `.` excludes both \n and \r.
            '.' if class_depth == 0 && !flags.contains('s') => out.push_str("[^\\n\\r]"),
            // The x flag drops whitespace outside character classes.
            ' ' | '\t' | '\n' | '\r' if extended && class_depth == 0 => {}
            // `regex` would read `#` as a comment start in x mode only, which
            // we never enable, and treats the rest like XPath.
            c => out.push(c),
        }
    }
    (class_depth == 0).then_some(out)
}

/// Translates an XPath replacement string: `$N` refers to group N (the
/// longest run of digits naming an existing group, at least one digit),
/// `\$` and `\\` are literal; any other `\` or `$` is an error (FORX0004).
fn translate_replacement(replacement: &str, group_count: usize) -> Option<String> {
    let mut out = String::with_capacity(replacement.len());
    let mut chars = replacement.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next()? {
                '\\' => out.push('\\'),
                '$' => out.push_str("$$"),
                _ => return None,
            },
            '$' => {
                let mut group = usize::try_from(chars.next()?.to_digit(10)?).ok()?;
                while let Some(digit) = chars.peek().and_then(|c| c.to_digit(10)) {
                    let longer = group * 10 + usize::try_from(digit).ok()?;
                    if longer > group_count {
                        break;
                    }
                    group = longer;
                    chars.next();
                }
                // A group that does not exist expands to "" in both dialects.
                let _ = write!(out, "${{{group}}}");
            }
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::translate;
    use crate::expr::test_util::{boolean, eval, lang, simple};

    #[test]
    fn regex_basics_and_flags() {
        assert_eq!(eval("REGEX(\"Alice\", \"^ali\")"), boolean(false));
        assert_eq!(eval("REGEX(\"Alice\", \"^ali\", \"i\")"), boolean(true));
        assert_eq!(eval("REGEX(\"Alice\"@en, \"ice$\")"), boolean(true));
        assert_eq!(eval("REGEX(\"a\\nb\", \"a.b\")"), boolean(false));
        assert_eq!(eval("REGEX(\"a\\rb\", \"a.b\")"), boolean(false));
        assert_eq!(eval("REGEX(\"a\\nb\", \"a.b\", \"s\")"), boolean(true));
        assert_eq!(eval("REGEX(\"a\\nb\", \"^b$\")"), boolean(false));
        assert_eq!(eval("REGEX(\"a\\nb\", \"^b$\", \"m\")"), boolean(true));
        assert_eq!(
            eval("REGEX(\"hello world\", \"hello world\", \"x\")"),
            boolean(false)
        );
        assert_eq!(
            eval("REGEX(\"helloworld\", \"hello world\", \"x\")"),
            boolean(true)
        );
        assert_eq!(eval("REGEX(\"a b\", \"a[ ]b\", \"x\")"), boolean(true));
        assert_eq!(eval("REGEX(\"a.b\", \"a.b\", \"q\")"), boolean(true));
        assert_eq!(eval("REGEX(\"axb\", \"a.b\", \"q\")"), boolean(false));
        assert_eq!(eval("REGEX(\"A.B\", \"a.b\", \"qi\")"), boolean(true));
        assert_eq!(eval("REGEX(\"a\", \"a\", \"g\")"), None);
        assert_eq!(eval("REGEX(\"a\", \"(\")"), None);
        assert_eq!(eval("REGEX(\"aa\", \"(a)\\\\1\")"), None);
        assert_eq!(eval("REGEX(1, \"1\")"), None);
        assert_eq!(eval("REGEX(\"a\", \"a\"@en)"), None);
    }

    #[test]
    fn xpath_specific_syntax() {
        assert_eq!(eval("REGEX(\"e\", \"^[a-z-[aeiou]]$\")"), boolean(false));
        assert_eq!(eval("REGEX(\"f\", \"^[a-z-[aeiou]]$\")"), boolean(true));
        assert_eq!(eval("REGEX(\"&\", \"^[&&]$\")"), boolean(true));
        assert_eq!(eval("REGEX(\"\\u00A0\", \"\\\\s\")"), boolean(false));
        assert_eq!(eval("REGEX(\" \", \"^\\\\s$\")"), boolean(true));
        assert_eq!(eval("REGEX(\"é1\", \"^\\\\w+$\")"), boolean(true));
        // `_` is punctuation (Pc), so not an XPath word character.
        assert_eq!(eval("REGEX(\"a_b\", \"^\\\\w+$\")"), boolean(false));
        assert_eq!(eval("REGEX(\"a-b\", \"^\\\\w+$\")"), boolean(false));
        assert_eq!(eval("REGEX(\"_x1\", \"^\\\\i\\\\c*$\")"), boolean(true));
        assert_eq!(eval("REGEX(\"1x\", \"^\\\\i\")"), boolean(false));
        assert_eq!(eval("REGEX(\" \", \"^[a\\\\s]$\")"), boolean(true));
        assert_eq!(eval("REGEX(\"a-b.c\", \"^a\\\\-b\\\\.c$\")"), boolean(true));
        assert_eq!(
            eval("REGEX(\"Ab\", \"^\\\\p{Lu}\\\\P{Lu}$\")"),
            boolean(true)
        );
        // Unicode block escapes have no `regex` equivalent.
        assert_eq!(eval("REGEX(\"a\", \"\\\\p{IsBasicLatin}\")"), None);
        assert!(translate("[a-z-[aeiou]]", "").is_some());
        assert_eq!(translate("[a", ""), None);
    }

    #[test]
    fn replace_with_groups() {
        assert_eq!(eval("REPLACE(\"abcd\", \"b\", \"Z\")"), simple("aZcd"));
        assert_eq!(
            eval("REPLACE(\"abab\", \"B\", \"Z\", \"i\")"),
            simple("aZaZ")
        );
        assert_eq!(
            eval("REPLACE(\"abcd\"@en, \"b\", \"Z\")"),
            lang("aZcd", "en")
        );
        assert_eq!(
            eval("REPLACE(\"John Smith\", \"(\\\\w+) (\\\\w+)\", \"$2, $1\")"),
            simple("Smith, John")
        );
        assert_eq!(
            eval("REPLACE(\"abc\", \"(b)\", \"[$0$1]\")"),
            simple("a[bb]c")
        );
        // One group: "$12" is group 1 followed by "2".
        assert_eq!(eval("REPLACE(\"abc\", \"(b)\", \"$12\")"), simple("ab2c"));
        assert_eq!(eval("REPLACE(\"abc\", \"b\", \"$1\")"), simple("ac"));
        assert_eq!(eval("REPLACE(\"abc\", \"b\", \"\\\\$\")"), simple("a$c"));
        assert_eq!(
            eval("REPLACE(\"abc\", \"b\", \"\\\\\\\\\")"),
            simple("a\\c")
        );
        assert_eq!(eval("REPLACE(\"abc\", \"b\", \"$\")"), None);
        assert_eq!(eval("REPLACE(\"abc\", \"b\", \"\\\\x\")"), None);
        assert_eq!(
            eval("REPLACE(\"a.c\", \".\", \"$0\", \"q\")"),
            simple("a$0c")
        );
        assert_eq!(eval("REPLACE(\"abc\", \"x*\", \"-\")"), None);
        assert_eq!(
            eval("REPLACE(\"abracadabra\", \"a(.)\", \"a$1$1\")"),
            simple("abbraccaddabbra")
        );
        assert_eq!(
            eval("REPLACE(\"darted\", \"^(.*?)d(.*)$\", \"$1c$2\")"),
            simple("carted")
        );
    }
}
