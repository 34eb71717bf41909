//! The parser's syntax errors in words. Its message lists the tokens it
//! expected as grammar fragments, character ranges included (`['A' ..= 'Z'
//! | '\u{00C0}'..='\u{00D6}' | …]`), and says `Prefix not found` for an
//! undeclared prefix without naming it. People read "a letter", and the
//! prefix's name.

/// `message` (the parser's, for `text`) made readable.
pub fn in_words(message: &str, text: &str) -> String {
    let Some((position, rest)) = split_position(message) else {
        return message.to_owned();
    };
    if rest.contains("Prefix not found") {
        if let Some(name) = prefix_before(text, position) {
            return format!(
                "error at {}:{}: the prefix `{name}:` is not declared: add `PREFIX {name}: <…>` \
                 before the query",
                position.0, position.1
            );
        }
    }
    let Some(list) = rest
        .strip_prefix("expected one of ")
        .or_else(|| rest.strip_prefix("expected "))
    else {
        return message.to_owned();
    };
    let mut words: Vec<String> = Vec::new();
    for item in split_items(list) {
        let word = describe(item.trim());
        if let Some(word) = word {
            if !words.contains(&word) {
                words.push(word);
            }
        }
    }
    if words.is_empty() {
        // Only "any character" was possible: the text ended too soon.
        return format!(
            "error at {}:{}: the query ends too soon (something is missing here)",
            position.0, position.1
        );
    }
    let expected = match words.len() {
        1 => words[0].clone(),
        n => format!("{} or {}", words[..n - 1].join(", "), words[n - 1]),
    };
    format!(
        "error at {}:{}: expected {expected}",
        position.0, position.1
    )
}

/// `error at L:C: rest` → ((L, C), rest).
fn split_position(message: &str) -> Option<((usize, usize), &str)> {
    let rest = message.strip_prefix("error at ")?;
    let (at, rest) = rest.split_once(": ")?;
    let (line, column) = at.split_once(':')?;
    Some(((line.parse().ok()?, column.parse().ok()?), rest))
}

/// The items of the expected list: quoted tokens, bracketed sets and
/// words, separated by commas outside quotes and brackets.
fn split_items(list: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut quote, mut start) = (0usize, None::<char>, 0usize);
    let mut chars = list.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            (Some(_), '\\') => {
                chars.next();
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[') => depth += 1,
            (None, ']') => depth = depth.saturating_sub(1),
            (None, ',') if depth == 0 => {
                items.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&list[start..]);
    items
}

/// One expected item in words; `None` for one that says nothing (`[_]`).
fn describe(item: &str) -> Option<String> {
    if let Some(token) = item.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        return Some(format!("`{}`", unescape(token)));
    }
    let Some(set) = item.strip_prefix('[').and_then(|t| t.strip_suffix(']')) else {
        return Some(item.to_owned());
    };
    if set == "_" {
        return None;
    }
    if set.contains("'A' ..= 'Z'") || set.contains("'a' ..= 'z'") {
        return Some("a name".to_owned());
    }
    if set.contains("'0' ..= '9'") {
        return Some("a digit".to_owned());
    }
    if set.contains("' '") || set.contains("'\\t'") || set.contains("'\\n'") {
        return Some("white space".to_owned());
    }
    // A set of one character: ['%'].
    let single = set.strip_prefix('\'').and_then(|t| t.strip_suffix('\''));
    match single {
        Some(c) if c.chars().count() == 1 => Some(format!("`{c}`")),
        Some("\\\\") => Some("`\\`".to_owned()),
        _ => Some("another character".to_owned()),
    }
}

/// A token as the parser quotes it (`\\` for `\`, `\"` for `"`).
fn unescape(token: &str) -> String {
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        match (c, chars.clone().next()) {
            ('\\', Some(next @ ('\\' | '"'))) => {
                out.push(next);
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

/// The prefix name written just before `(line, column)` (1-based) in
/// `text`: the last `name:` at or before it.
fn prefix_before(text: &str, (line, column): (usize, usize)) -> Option<String> {
    let line = text.lines().nth(line.checked_sub(1)?)?;
    let upto: String = line.chars().take(column).collect();
    let colon = upto.rfind(':')?;
    let name: String = upto[..colon]
        .chars()
        .rev()
        .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
        .collect::<Vec<char>>()
        .into_iter()
        .rev()
        .collect();
    let name = name.trim_start_matches(|c: char| !c.is_alphabetic());
    Some(name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use spargebra::SparqlParser;

    fn error(text: &str) -> String {
        let message = SparqlParser::new()
            .parse_query(text)
            .unwrap_err()
            .to_string();
        in_words(&message, text)
    }

    #[test]
    fn an_undeclared_prefix_is_named() {
        let message = error("SELECT ?b WHERE { ?b a ex:Tern }");
        assert_eq!(
            message,
            "error at 1:31: the prefix `ex:` is not declared: add `PREFIX ex: <…>` before the query"
        );
        let message = error("SELECT * WHERE {\n  ?s foaf:name ?n }");
        assert!(message.contains("`foaf:`"), "{message}");
    }

    #[test]
    fn expected_tokens_are_words_not_character_ranges() {
        let message = error("SELECT * { ?s ?p ?o ");
        assert!(message.starts_with("error at 1:21: expected "), "{message}");
        assert!(message.contains("`}`"), "{message}");
        assert!(!message.contains("\\u{"), "{message}");
        let message = error("SELECT ?x WHERE { ?x <p> 1 } ORDER BY");
        assert!(!message.contains("..="), "{message}");
        let message = error("SELECT * { ?s ?p \"abc }");
        assert_eq!(
            message,
            "error at 1:24: expected `\"`, `\\`, `\\U` or `\\u`"
        );
    }

    #[test]
    fn a_query_cut_short_is_told_so() {
        let message = error("SELECT WHERE");
        assert!(message.contains("ends too soon"), "{message}");
    }

    #[test]
    fn other_messages_pass_through() {
        assert_eq!(in_words("something else", ""), "something else");
    }
}
