//! `SELECT *` answers its variables in the order they first appear in the
//! query, as other engines do and as a reader expects; the parser sorts
//! them by name (`SELECT * { ?z ?y ?a }` came back as `?a ?y ?z`).
//!
//! The parsed query does not say whether it was written with `*` (a query
//! that names every variable in sorted order looks the same), so the text
//! is read up to its first SELECT: only the prologue (BASE, PREFIX, their
//! IRIs and comments) can come before it. The order is that of each
//! variable's first mention in the text.

use spargebra::algebra::GraphPattern;
use spargebra::Query;

/// Puts the columns of a `SELECT *` query in first-appearance order.
pub fn in_query_order(text: &str, query: &mut Query) {
    let Query::Select { pattern, .. } = query else {
        return;
    };
    let Some(body) = star_end(text) else {
        return;
    };
    let text = &text[body..];
    let mut pattern = pattern;
    // The projection sits under the solution modifiers DISTINCT, REDUCED
    // and OFFSET/LIMIT.
    loop {
        match pattern {
            GraphPattern::Distinct { inner }
            | GraphPattern::Reduced { inner }
            | GraphPattern::Slice { inner, .. } => pattern = inner,
            GraphPattern::Project { variables, .. } => {
                // Stable: a variable not found in the text keeps its place
                // among the others at the end.
                variables.sort_by_key(|v| first_mention(text, v.as_str()).unwrap_or(usize::MAX));
                return;
            }
            _ => return,
        }
    }
}

/// Where the text first mentions `?name` or `$name` (as a whole name).
fn first_mention(text: &str, name: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(at) = text[from..].find(name).map(|i| i + from) {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + name.len()).copied();
        let ends = !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80);
        if matches!(before, Some(b'?' | b'$')) && ends {
            return Some(at);
        }
        from = at + name.len();
    }
    None
}

/// Where the `*` ends if the query's first SELECT is followed by one
/// (after DISTINCT or REDUCED): skips comments and IRIs, and keywords that
/// are prefix names.
fn star_end(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'<' => {
                while i < bytes.len() && bytes[i] != b'>' {
                    i += 1;
                }
                i += 1;
            }
            c if c.is_ascii_alphabetic() => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                let word = &text[start..i];
                let is_name = bytes.get(i) == Some(&b':');
                if !is_name && word.eq_ignore_ascii_case("SELECT") {
                    let rest = text[i..].trim_start();
                    let rest = strip_keyword(rest, "DISTINCT")
                        .or_else(|| strip_keyword(rest, "REDUCED"))
                        .unwrap_or(rest);
                    return rest.starts_with('*').then(|| text.len() - rest.len() + 1);
                }
            }
            _ => i += 1,
        }
    }
    None
}

fn strip_keyword<'a>(text: &'a str, keyword: &str) -> Option<&'a str> {
    let head = text.get(..keyword.len())?;
    head.eq_ignore_ascii_case(keyword)
        .then(|| text[keyword.len()..].trim_start())
}

#[cfg(test)]
mod tests {
    use super::*;
    use spargebra::SparqlParser;

    fn columns(text: &str) -> Vec<String> {
        let mut query = SparqlParser::new().parse_query(text).unwrap();
        in_query_order(text, &mut query);
        let Query::Select { mut pattern, .. } = query else {
            panic!("a SELECT")
        };
        loop {
            match pattern {
                GraphPattern::Project { variables, .. } => {
                    return variables.iter().map(|v| v.as_str().to_owned()).collect()
                }
                GraphPattern::Distinct { inner }
                | GraphPattern::Reduced { inner }
                | GraphPattern::Slice { inner, .. } => pattern = *inner,
                _ => panic!("no projection"),
            }
        }
    }

    #[test]
    fn star_columns_follow_the_query_and_named_ones_stay() {
        assert_eq!(columns("SELECT * { ?z ?y ?a }"), ["z", "y", "a"]);
        assert_eq!(
            columns("# SELECT ?a\nPREFIX select: <http://e/select?x> select distinct * { ?z select:p ?a } LIMIT 3"),
            ["z", "a"]
        );
        assert_eq!(
            columns("SELECT REDUCED * { ?z ?y ?a OPTIONAL { ?a ?q ?b } BIND(1 AS ?c) }"),
            ["z", "y", "a", "q", "b", "c"]
        );
        // Named variables keep the order written, sorted or not.
        assert_eq!(columns("SELECT ?a ?y ?z { ?z ?y ?a }"), ["a", "y", "z"]);
        assert_eq!(columns("SELECT ?y ?a { ?z ?y ?a }"), ["y", "a"]);
        // A subquery's star is inside; the outer projection is named.
        assert_eq!(columns("SELECT ?z { SELECT * { ?z ?y ?a } }"), ["z"]);
    }
}
