//! SPARQL queries from bytes, by a grammar: each byte picks a production,
//! so that small changes to the input make small changes to the query and
//! the fuzzer's mutations reach the planner and operators with queries that
//! parse. Terms come from the fuzz data set (`lib.rs`), so patterns match.
//! Nesting is bounded by a budget of productions.

use std::fmt::Write as _;

/// Reads choices from the input; past its end every choice is 0.
struct Choices<'a> {
    data: &'a [u8],
    at: usize,
    /// Productions left before everything becomes a leaf.
    budget: u32,
    /// Variables made by BIND so far (each BIND needs a new one).
    bound: u32,
}

impl Choices<'_> {
    fn pick(&mut self, n: usize) -> usize {
        let byte = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        byte as usize % n.max(1)
    }

    fn flag(&mut self) -> bool {
        self.pick(2) == 1
    }

    /// Whether one more nested production fits in the budget.
    fn nest(&mut self) -> bool {
        if self.budget == 0 {
            return false;
        }
        self.budget -= 1;
        true
    }
}

const VARIABLES: &[&str] = &["?a", "?b", "?c", "?d", "?g"];
const IRIS: &[&str] = &[
    "<http://e/s0>",
    "<http://e/s1>",
    "<http://e/s3>",
    "<http://e/s4>",
    "<http://e/g1>",
    "<http://e/none>",
];
const PREDICATES: &[&str] = &[
    "<http://e/p0>",
    "<http://e/p1>",
    "<http://e/p2>",
    "<http://e/p3>",
    "a",
];
const LITERALS: &[&str] = &[
    "1",
    "2.5",
    "-3e2",
    "\"1\"^^<http://www.w3.org/2001/XMLSchema#integer>",
    "\"tern\"@en",
    "\"plain\"",
    "\"\"",
    "true",
    "\"2024-05-01\"^^<http://www.w3.org/2001/XMLSchema#date>",
    "\"x\"^^<http://e/unknown>",
    "0",
];

/// The query the bytes stand for.
pub fn generate(data: &[u8]) -> String {
    let mut c = Choices {
        data,
        at: 0,
        budget: 40,
        bound: 0,
    };
    let mut out = String::new();
    let form = c.pick(8);
    let mut group = String::new();
    group_pattern(&mut c, &mut group);
    match form {
        0 => {
            let _ = write!(out, "ASK {group}");
        }
        1 => {
            let _ = write!(
                out,
                "CONSTRUCT {{ {} {} {} }} WHERE {group}",
                var(&mut c),
                predicate(&mut c),
                term(&mut c)
            );
        }
        2 => {
            let _ = write!(out, "DESCRIBE {} WHERE {group}", var(&mut c));
        }
        3 | 4 => {
            // Aggregates over groups.
            let key = var(&mut c);
            let value = var(&mut c);
            let aggregate = [
                "COUNT(*)",
                "COUNT(DISTINCT VALUE)",
                "SUM(VALUE)",
                "AVG(VALUE)",
                "MIN(VALUE)",
                "MAX(VALUE)",
                "SAMPLE(VALUE)",
                "GROUP_CONCAT(STR(VALUE); SEPARATOR=\",\")",
            ][c.pick(8)]
            .replace("VALUE", value);
            let _ = write!(
                out,
                "SELECT {key} ({aggregate} AS ?agg) WHERE {group} GROUP BY {key}"
            );
            if c.flag() {
                let _ = write!(out, " HAVING (COUNT(*) > {})", c.pick(3));
            }
        }
        _ => {
            let distinct = ["", "DISTINCT ", "REDUCED "][c.pick(3)];
            let projection = if c.flag() {
                "*".to_owned()
            } else {
                let mut p = var(&mut c).to_owned();
                if c.flag() {
                    let _ = write!(p, " ({} AS ?e)", expression(&mut c));
                }
                p
            };
            let _ = write!(out, "SELECT {distinct}{projection} WHERE {group}");
        }
    }
    if form >= 3 {
        if c.flag() {
            let direction = ["ASC", "DESC"][c.pick(2)];
            let _ = write!(out, " ORDER BY {direction}({})", var(&mut c));
        }
        if c.flag() {
            let _ = write!(out, " LIMIT {}", c.pick(5));
        }
        if c.flag() {
            let _ = write!(out, " OFFSET {}", c.pick(4));
        }
    }
    out
}

fn var(c: &mut Choices) -> &'static str {
    VARIABLES[c.pick(VARIABLES.len())]
}

fn predicate(c: &mut Choices) -> &'static str {
    PREDICATES[c.pick(PREDICATES.len())]
}

fn term(c: &mut Choices) -> String {
    match c.pick(4) {
        0 | 1 => var(c).to_owned(),
        2 => IRIS[c.pick(IRIS.len())].to_owned(),
        _ => LITERALS[c.pick(LITERALS.len())].to_owned(),
    }
}

/// A subject: a variable, an IRI or a blank node.
fn subject(c: &mut Choices) -> String {
    match c.pick(5) {
        0..=2 => var(c).to_owned(),
        3 => IRIS[c.pick(IRIS.len())].to_owned(),
        _ => "[]".to_owned(),
    }
}

fn path(c: &mut Choices) -> String {
    if !c.nest() {
        return predicate(c).to_owned();
    }
    match c.pick(9) {
        0 => format!("^({})", path(c)),
        1 => format!("({}/{})", path(c), path(c)),
        2 => format!("({}|{})", path(c), path(c)),
        3 => format!("({})*", path(c)),
        4 => format!("({})+", path(c)),
        5 => format!("({})?", path(c)),
        6 => format!("!({}|^{})", PREDICATES[c.pick(4)], PREDICATES[c.pick(4)]),
        _ => predicate(c).to_owned(),
    }
}

fn group_pattern(c: &mut Choices, out: &mut String) {
    out.push_str("{ ");
    let elements = 1 + c.pick(4);
    for _ in 0..elements {
        element(c, out);
        out.push(' ');
    }
    out.push('}');
}

fn element(c: &mut Choices, out: &mut String) {
    if !c.nest() {
        let _ = write!(out, "{} {} {} .", subject(c), predicate(c), term(c));
        return;
    }
    match c.pick(16) {
        0..=3 => {
            let _ = write!(out, "{} {} {} .", subject(c), predicate(c), term(c));
        }
        4 => {
            let _ = write!(out, "{} {} {} .", subject(c), path(c), term(c));
        }
        5 => {
            let _ = write!(out, "FILTER({})", expression(c));
        }
        6 => {
            out.push_str("OPTIONAL ");
            group_pattern(c, out);
            if c.flag() {
                out.truncate(out.len() - 1);
                let _ = write!(out, " FILTER({}) }}", expression(c));
            }
        }
        7 => {
            out.push_str("MINUS ");
            group_pattern(c, out);
        }
        8 => {
            group_pattern(c, out);
            out.push_str(" UNION ");
            group_pattern(c, out);
        }
        9 => {
            let e = expression(c);
            c.bound += 1;
            let _ = write!(out, "BIND({e} AS ?bound{})", c.bound);
        }
        10 => {
            let i = c.pick(VARIABLES.len());
            let (v, w) = (
                VARIABLES[i],
                VARIABLES[(i + 1 + c.pick(4)) % VARIABLES.len()],
            );
            let _ = write!(
                out,
                "VALUES ({v} {w}) {{ ({} {}) (UNDEF {}) }}",
                term_constant(c),
                term_constant(c),
                term_constant(c)
            );
        }
        11 => {
            let graph = if c.flag() { "?g" } else { "<http://e/g1>" };
            let _ = write!(out, "GRAPH {graph} ");
            group_pattern(c, out);
        }
        12 => {
            let _ = write!(out, "{{ SELECT {} WHERE ", var(c));
            group_pattern(c, out);
            let _ = write!(out, " LIMIT {} }}", 1 + c.pick(3));
        }
        13 => {
            let not = if c.flag() { "NOT " } else { "" };
            let _ = write!(out, "FILTER {not}EXISTS ");
            group_pattern(c, out);
        }
        14 => {
            let _ = write!(
                out,
                "[ {} {} ] {} {} .",
                predicate(c),
                term(c),
                predicate(c),
                term(c)
            );
        }
        _ => {
            let _ = write!(
                out,
                "{} {} ({} {}) .",
                subject(c),
                predicate(c),
                term(c),
                term(c)
            );
        }
    }
}

fn term_constant(c: &mut Choices) -> &'static str {
    if c.flag() {
        IRIS[c.pick(IRIS.len())]
    } else {
        LITERALS[c.pick(LITERALS.len())]
    }
}

fn expression(c: &mut Choices) -> String {
    if !c.nest() {
        return term(c);
    }
    let a = |c: &mut Choices| expression(c);
    match c.pick(24) {
        0 => format!("({} = {})", a(c), a(c)),
        1 => format!("({} != {})", a(c), a(c)),
        2 => format!("({} < {})", a(c), a(c)),
        3 => format!("({} >= {})", a(c), a(c)),
        4 => format!("({} && {})", a(c), a(c)),
        5 => format!("({} || {})", a(c), a(c)),
        6 => format!("({} + {})", a(c), a(c)),
        7 => format!("({} * {})", a(c), a(c)),
        8 => format!("({} / {})", a(c), a(c)),
        9 => format!("!({})", a(c)),
        10 => format!("-({})", a(c)),
        11 => format!("BOUND({})", var(c)),
        12 => format!("IF({}, {}, {})", a(c), a(c), a(c)),
        13 => format!("COALESCE({}, {})", a(c), a(c)),
        14 => format!("REGEX(STR({}), \"^t|[0-9]\", \"i\")", a(c)),
        15 => format!("SUBSTR(STR({}), {}, 2)", a(c), c.pick(4)),
        16 => format!("STRLEN(STR({}))", a(c)),
        17 => format!("CONCAT(STR({}), LANG({}))", a(c), a(c)),
        18 => format!("ABS({})", a(c)),
        19 => format!("DATATYPE({})", a(c)),
        20 => format!("isIRI({})", a(c)),
        21 => format!("({} IN ({}, {}))", a(c), a(c), term_constant(c)),
        22 => format!("sameTerm({}, {})", a(c), a(c)),
        _ => format!(
            "<http://www.w3.org/2001/XMLSchema#{}>({})",
            ["integer", "string", "double", "boolean", "date"][c.pick(5)],
            a(c)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_input_makes_a_query_that_parses() {
        let engine = crate::engine();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for len in 0..400 {
            let data: Vec<u8> = (0..len % 97)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    seed as u8
                })
                .collect();
            let text = generate(&data);
            // Parsed on a query stack, as everywhere (a debug build's frames
            // are large).
            let result = std::thread::Builder::new()
                .stack_size(tern_engine::QUERY_STACK_BYTES)
                .spawn(move || engine.query(&text, None).map(drop).map_err(|e| (text, e)))
                .unwrap()
                .join()
                .unwrap();
            assert!(
                !matches!(result, Err((_, tern_engine::EngineError::Parse(_)))),
                "{result:?}"
            );
        }
    }
}
