//! `FILTER(?d >= date && ?d < date)` over a pattern whose object is `?d`:
//! the scan reads only the range of inline date IDs near those bounds, and the
//! results are those of the whole pattern filtered.

use tern_engine::{EngineOptions, QueryOutcome};

mod common;

const DATA: &str = r#"
@prefix ex: <http://example.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:r1 ex:date "2008-01-31"^^xsd:date ; ex:for ex:p1 .
ex:r2 ex:date "2008-02-01"^^xsd:date ; ex:for ex:p1 .
ex:r3 ex:date "2008-02-15"^^xsd:date ; ex:for ex:p2 .
ex:r4 ex:date "2008-02-28+13:00"^^xsd:date ; ex:for ex:p2 .
ex:r5 ex:date "2008-02-29"^^xsd:date ; ex:for ex:p3 .
ex:r6 ex:date "2008-02-29-05:00"^^xsd:date ; ex:for ex:p3 .
ex:r7 ex:date "2008-03-01Z"^^xsd:date .
ex:r8 ex:date "2008-02-10T10:00:00"^^xsd:dateTime .
ex:r9 ex:date ex:notADate .
ex:m1 ex:mixed "2008-02-10"^^xsd:date .
ex:m2 ex:mixed "2008-02-11+00:00"^^xsd:date .
ex:m3 ex:mixed "2008-02-12" .
ex:m4 ex:mixed "2007-12-31+00:00"^^xsd:date .
ex:t1 ex:time "2008-02-10T10:00:00Z"^^xsd:dateTime .
ex:t2 ex:time "2008-02-10T23:30:00+14:00"^^xsd:dateTime .
ex:t3 ex:time "2008-02-11T00:00:00"^^xsd:dateTime .
ex:t4 ex:time "2008-02-12T00:00:00-14:00"^^xsd:dateTime .
"#;

const PREFIX: &str = "PREFIX ex: <http://example.org/>\n\
                      PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n";

/// The first variable's values, sorted, with `ex:` dropped.
fn values(engine: &tern_engine::Engine, query: &str) -> Vec<String> {
    let query = format!("{PREFIX}{query}");
    let QueryOutcome::Solutions { rows, .. } = engine.query(&query, None).unwrap() else {
        panic!("not a SELECT")
    };
    let mut out: Vec<String> = rows.map(|r| common::short(&r.unwrap()[0])).collect();
    out.sort();
    out
}

fn plan(engine: &tern_engine::Engine, query: &str) -> String {
    common::plan_text(engine, &format!("{PREFIX}{query}"))
}

/// Runs `SELECT ?r { pattern FILTER(condition) }` narrowed or not as
/// `narrowed` says, and the same with the filter kept whole (`|| false`
/// hides the conjuncts from the planner); both must give `expected`.
fn check(pattern: &str, condition: &str, narrowed: bool, expected: &[&str]) {
    let (_tmp, engine) = common::engine_over("data.ttl", DATA, EngineOptions::default());
    let query = format!("SELECT ?r {{ {pattern} FILTER({condition}) }}");
    let shown = plan(&engine, &query);
    assert_eq!(shown.contains(" reading "), narrowed, "{query}\n{shown}");
    let whole = format!("SELECT ?r {{ {pattern} FILTER(({condition}) || false) }}");
    assert!(!plan(&engine, &whole).contains(" reading "));
    assert_eq!(values(&engine, &query), values(&engine, &whole), "{query}");
    assert_eq!(values(&engine, &query), expected, "{query}");
}

#[test]
fn date_ranges_read_only_near_dates_and_keep_the_filter_exact() {
    let february = r#"?d >= "2008-02-01"^^xsd:date && ?d < "2008-02-29"^^xsd:date"#;
    check("?r ex:date ?d", february, true, &["r2", "r3", "r4"]);
    // Flipped operands, one bound only, equality.
    check(
        "?r ex:date ?d",
        r#""2008-02-29"^^xsd:date <= ?d"#,
        true,
        // r6 (`-05:00`) and the bound (no timezone) are too close to order.
        &["r5", "r7"],
    );
    check(
        "?r ex:date ?d",
        r#"?d = "2008-02-15"^^xsd:date"#,
        true,
        &["r3"],
    );
    // Joined: the narrowed pattern is scanned or looked up per row.
    check(
        "?r ex:for ?p . ?r ex:date ?d",
        february,
        true,
        &["r2", "r3", "r4"],
    );
    check(
        "ex:r3 ex:date ?d . ?r ex:for ?p",
        february,
        true,
        &["r1", "r2", "r3", "r4", "r5", "r6"],
    );
    // A date and a dateTime bound: no value is both.
    check(
        "?r ex:date ?d",
        r#"?d >= "2008-02-01"^^xsd:date && ?d < "2008-02-29T00:00:00"^^xsd:dateTime"#,
        true,
        &[],
    );
}

#[test]
fn predicates_with_dates_outside_the_inline_range_are_not_narrowed() {
    // `"2008-02-11+00:00"` is a date in the vocabulary (its canonical form
    // ends in `Z`): no range of inline IDs holds it.
    check(
        "?r ex:mixed ?d",
        r#"?d >= "2008-02-01"^^xsd:date && ?d < "2008-02-29"^^xsd:date"#,
        false,
        &["m1", "m2"],
    );
}

#[test]
fn date_time_ranges_keep_values_of_every_timezone() {
    check(
        "?r ex:time ?d",
        r#"?d >= "2008-02-10T09:00:00Z"^^xsd:dateTime && ?d <= "2008-02-10T10:00:00Z"^^xsd:dateTime"#,
        true,
        &["t1", "t2"],
    );
    check(
        "?r ex:time ?d",
        r#"?d > "2008-02-10T09:00:00Z"^^xsd:dateTime"#,
        true,
        &["t1", "t2", "t3", "t4"],
    );
}

const TITLES: &str = r#"
@prefix ex: <http://example.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:a ex:title "Efficient joins" .
ex:b ex:title "Efficient"@en .
ex:c ex:title "Efficiency"^^xsd:string .
ex:d ex:title "Eff.cient"@fr .
ex:j ex:title "Efficient token"^^xsd:token .
ex:e ex:title "efficient, lower case" .
ex:f ex:title "An Efficient index" .
ex:g ex:title 42 .
ex:h ex:title ex:Efficient .
ex:i ex:title "Effort\u0000nul" .
"#;

/// `STRSTARTS` and anchored `REGEX` read only the vocabulary range of
/// literals with the prefix; the answers are those of the filter on every
/// row (language-tagged strings included; other datatypes, IRIs and numbers
/// are not strings to these functions).
#[test]
fn string_prefixes_read_only_the_literals_that_start_so() {
    let (_tmp, engine) = common::engine_over("titles.ttl", TITLES, EngineOptions::default());
    let cases: [(&str, bool, &[&str]); 9] = [
        (r#"STRSTARTS(?t, "Efficient")"#, true, &["a", "b"]),
        (r#"REGEX(?t, "^Efficien")"#, true, &["a", "b", "c"]),
        (r#"REGEX(?t, "^Eff.c")"#, true, &["a", "b", "c", "d"]),
        (r#"REGEX(?t, "^Eff\\.c")"#, true, &["d"]),
        (r#"REGEX(?t, "^Effi?c")"#, true, &["a", "b", "c"]),
        (r#"REGEX(?t, "^Effo", "s")"#, true, &["i"]),
        (r#"REGEX(?t, "^Zzz")"#, true, &[]),
        // Not narrowed: case-insensitive, unanchored, alternation.
        (r#"REGEX(?t, "^efficient", "i")"#, false, &["a", "b", "e"]),
        (r#"REGEX(?t, "^An|^Eff\\.")"#, false, &["d", "f"]),
    ];
    for (condition, narrowed, expected) in cases {
        let query = format!("SELECT ?r {{ ?r ex:title ?t FILTER({condition}) }}");
        let shown = plan(&engine, &query);
        assert_eq!(shown.contains(" reading "), narrowed, "{query}\n{shown}");
        let whole = format!("SELECT ?r {{ ?r ex:title ?t FILTER(({condition}) || false) }}");
        assert_eq!(values(&engine, &query), values(&engine, &whole), "{query}");
        assert_eq!(values(&engine, &query), expected, "{query}");
    }
}

/// A title an update brought is a term of the delta, outside the sorted
/// vocabulary: prefixes are then not narrowed, and it is found.
#[test]
fn string_prefixes_find_literals_that_updates_brought() {
    let (_tmp, engine) = common::engine_over("titles.ttl", TITLES, EngineOptions::default());
    let update = format!("{PREFIX}INSERT DATA {{ ex:k ex:title \"Efficient updates\" }}");
    engine
        .update(&update, &tern_engine::UpdateRequest::default())
        .unwrap();
    let query = r#"SELECT ?r { ?r ex:title ?t FILTER(STRSTARTS(?t, "Efficient")) }"#;
    assert!(!plan(&engine, query).contains(" reading "));
    assert_eq!(values(&engine, query), ["a", "b", "k"]);
}

const NUMBERS: &str = r#"
@prefix ex: <http://example.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:x ex:size 100 ; ex:weight 50 ; ex:feature ex:f1, ex:f2 ; ex:label "x" .
ex:a ex:size 90 ; ex:weight 45 ; ex:feature ex:f1 ; ex:label "a" .
ex:b ex:size 130 ; ex:weight 52 ; ex:feature ex:f2 ; ex:label "b" .
ex:c ex:size 99 ; ex:weight 80 ; ex:feature ex:f1 ; ex:label "c" .
ex:d ex:size 101 ; ex:weight 49 ; ex:feature ex:f3 ; ex:label "d" .
ex:e ex:size 119 ; ex:weight 31 ; ex:feature ex:f1, ex:f2 ; ex:label "e" .
ex:f ex:size 80 ; ex:weight 50 ; ex:feature ex:f2 ; ex:label "f" .
ex:g ex:weight 50 ; ex:feature ex:f2 ; ex:label "g" .
ex:h ex:size -7 ; ex:weight -1 ; ex:feature ex:f1 ; ex:label "h" .
ex:m1 ex:mixed 10 .
ex:m2 ex:mixed 10.5 .
ex:m3 ex:mixed 1.1e1 .
ex:m4 ex:mixed 12 .
ex:v1 ex:padded "010"^^xsd:integer .
ex:t1 ex:title "not a number" . ex:t2 ex:title 5 .
ex:v2 ex:padded 11 .
"#;

/// The numbers, and 30 more sizes far from theirs (1000 and up): a range
/// is read only where it keeps at most a third of its predicate's rows.
fn numbers() -> String {
    let far: String = (0..30)
        .map(|i| {
            format!(
                "<http://example.org/z{i}> <http://example.org/size> {} .\n",
                1000 + i
            )
        })
        .collect();
    format!("{NUMBERS}{far}")
}

/// Comparisons with numbers read only a range of inline integers, where the
/// predicate's numbers are all inline integers and the range keeps few of
/// them; elsewhere (decimals and doubles beside them, integers in a
/// non-canonical form, most of the rows) the whole pattern.
#[test]
fn numeric_bounds_read_only_a_range_of_integers() {
    let (_tmp, engine) = common::engine_over("numbers.ttl", &numbers(), EngineOptions::default());
    let cases: [(&str, &str, bool, &[&str]); 12] = [
        (
            "?r ex:size ?s",
            "?s > 99 && ?s <= 119",
            true,
            &["d", "e", "x"],
        ),
        ("?r ex:size ?s", "?s < 0", true, &["h"]),
        ("?r ex:size ?s", "?s = 101.0", true, &["d"]),
        ("?r ex:size ?s", "99.5 < ?s && ?s < 100.5", true, &["x"]),
        (
            "?r ex:size ?s",
            "?s >= 2 * 50 - -1 && ?s < 500",
            true,
            &["b", "d", "e"],
        ),
        ("?r ex:size ?s", "?s > 1e300", true, &[]),
        ("?r ex:size ?s", "?s < -1e300", true, &[]),
        // Most rows: the whole pattern, in subject order.
        (
            "?r ex:size ?s",
            "?s >= 90",
            false,
            &[
                "a", "b", "c", "d", "e", "x", "z0", "z1", "z10", "z11", "z12", "z13", "z14", "z15",
                "z16", "z17", "z18", "z19", "z2", "z20", "z21", "z22", "z23", "z24", "z25", "z26",
                "z27", "z28", "z29", "z3", "z4", "z5", "z6", "z7", "z8", "z9",
            ],
        ),
        ("?r ex:mixed ?s", "?s > 10 && ?s < 12", false, &["m2", "m3"]),
        ("?r ex:padded ?s", "?s <= 10", false, &["v1"]),
        // A string bound: no range (no number is greater than a string).
        ("?r ex:size ?s", r#"?s > "1""#, false, &[]),
        // A string among the values: no range (it might be a number in
        // another form).
        ("?r ex:title ?s", "?s < 10", false, &["t2"]),
    ];
    for (pattern, condition, narrowed, expected) in cases {
        let query = format!("SELECT ?r {{ {pattern} FILTER({condition}) }}");
        let shown = plan(&engine, &query);
        assert_eq!(shown.contains(" reading "), narrowed, "{query}\n{shown}");
        let whole = format!("SELECT ?r {{ {pattern} FILTER(({condition}) || false) }}");
        assert_eq!(values(&engine, &query), values(&engine, &whole), "{query}");
        assert_eq!(values(&engine, &query), expected, "{query}");
    }
}

/// BSBM's "products like X": the comparisons are with X's own values. X's
/// one-row patterns are evaluated first, and the rest is planned with their
/// values, so the compared patterns read only the band around them; the
/// answers are those of the filter kept whole.
#[test]
fn comparisons_with_a_few_rows_values_become_ranges_of_the_rest() {
    let (_tmp, engine) = common::engine_over("numbers.ttl", &numbers(), EngineOptions::default());
    let like_x = "?p ex:label ?l . ex:x ex:feature ?f . ?p ex:feature ?f . \
                  ex:x ex:size ?xs . ?p ex:size ?ps . ex:x ex:weight ?xw . ?p ex:weight ?pw";
    let cases: [(&str, &[&str]); 4] = [
        (
            "ex:x != ?p && ?ps < ?xs + 21 && ?ps > ?xs - 21 && ?pw < ?xw + 6 && ?pw > ?xw - 6",
            &["a", "f"],
        ),
        ("?ps >= ?xs", &["b", "e", "e", "x", "x"]),
        ("?ps < ?xs && ?pw >= ?xw", &["c", "f"]),
        ("?ps > ?xs * 10", &[]),
    ];
    for (condition, expected) in cases {
        let query = format!("SELECT DISTINCT ?p ?f {{ {like_x} FILTER({condition}) }}");
        let shown = plan(&engine, &query);
        assert!(shown.contains("BindJoin"), "{query}\n{shown}");
        let whole = format!("SELECT DISTINCT ?p ?f {{ {like_x} FILTER(({condition}) || false) }}");
        assert!(!plan(&engine, &whole).contains("BindJoin"));
        assert_eq!(values(&engine, &query), values(&engine, &whole), "{query}");
        assert_eq!(values(&engine, &query), expected, "{query}");
    }
    // The seed's values come out with the rest's.
    let query = format!(
        "SELECT ?p ?xs ?ps ?f {{ {like_x} FILTER(?ps > ?xs && ?ps < ?xs + 20) }} ORDER BY ?f"
    );
    let QueryOutcome::Solutions { rows, .. } =
        engine.query(&format!("{PREFIX}{query}"), None).unwrap()
    else {
        panic!("not a SELECT")
    };
    let rows: Vec<Vec<String>> = rows
        .map(|r| r.unwrap().iter().map(common::short).collect())
        .collect();
    assert_eq!(rows, [["e", "100", "119", "f1"], ["e", "100", "119", "f2"]]);
}
