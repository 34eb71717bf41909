//! The summary of a run, and the list of known failures it is checked against.

use crate::runner::{Outcome, SuiteReport};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

/// Pass rate over the tests that ran (skipped ones excluded), in percent.
pub fn pass_rate(passed: usize, failed: usize) -> f64 {
    if passed + failed == 0 {
        100.0
    } else {
        100.0 * passed as f64 / (passed + failed) as f64
    }
}

fn counts(report: &SuiteReport) -> (usize, usize, usize) {
    let mut c = (0, 0, 0);
    for r in &report.results {
        match r.outcome {
            Outcome::Pass => c.0 += 1,
            Outcome::Fail(_) => c.1 += 1,
            Outcome::Skip(_) => c.2 += 1,
        }
    }
    c
}

/// A short class for a failure reason, to count failures by cause.
pub fn reason_class(reason: &str) -> String {
    let parts: Vec<&str> = reason.splitn(4, ": ").collect();
    let depth = match parts[0] {
        // "query error: not supported yet: X" / "panic: message at file:line"
        "query error" | "panic" | "load error" => 3,
        _ => 1,
    };
    let mut class = parts[..depth.min(parts.len())].join(": ");
    if parts[0] == "panic" {
        if let Some(i) = class.find(" at ") {
            class.truncate(i);
        }
    }
    if let Some(i) = class.find(';') {
        class.truncate(i);
    }
    if class.chars().count() > 100 {
        class = class.chars().take(100).collect::<String>() + "...";
    }
    class
}

/// The table of passed / failed / skipped per suite and in total, the skip
/// reasons and the most frequent failure reasons.
pub fn summary(reports: &[SuiteReport], seconds: f64) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "W3C SPARQL test suites");
    let _ = writeln!(
        out,
        "{:<22} {:>7} {:>7} {:>8} {:>10}",
        "suite", "passed", "failed", "skipped", "pass rate"
    );
    let mut total = (0, 0, 0);
    for report in reports {
        let (p, f, s) = counts(report);
        total = (total.0 + p, total.1 + f, total.2 + s);
        let _ = writeln!(
            out,
            "{:<22} {p:>7} {f:>7} {s:>8} {:>9.1}%",
            report.name,
            pass_rate(p, f)
        );
    }
    let (p, f, s) = total;
    let _ = writeln!(
        out,
        "{:<22} {p:>7} {f:>7} {s:>8} {:>9.1}%",
        "total",
        pass_rate(p, f)
    );
    let mut skips: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failures: HashMap<String, usize> = HashMap::new();
    for r in reports.iter().flat_map(|r| &r.results) {
        match &r.outcome {
            Outcome::Skip(reason) => *skips.entry(reason).or_default() += 1,
            Outcome::Fail(reason) => *failures.entry(reason_class(reason)).or_default() += 1,
            Outcome::Pass => {}
        }
    }
    if skips.is_empty() {
        let _ = writeln!(out, "skipped by reason: none");
    } else {
        let _ = writeln!(out, "skipped by reason:");
        for (reason, n) in &skips {
            let _ = writeln!(out, "  {n:>5}  {reason}");
        }
    }
    if !failures.is_empty() {
        let mut sorted: Vec<(String, usize)> = failures.into_iter().collect();
        sorted.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let _ = writeln!(out, "top failure reasons:");
        for (reason, n) in sorted.iter().take(15) {
            let _ = writeln!(out, "  {n:>5}  {reason}");
        }
    }
    let _ = writeln!(out, "run time: {seconds:.1} s");
    out
}

/// Parses known-failures.txt: `IRI reason` per line (`<IRI>` also accepted),
/// `#` comments and blank lines ignored. Returns IRI -> reason.
pub fn parse_known(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|line| {
            let (iri, reason) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
            let iri = iri.trim_start_matches('<').trim_end_matches('>');
            (iri.to_owned(), reason.trim().to_owned())
        })
        .collect()
}

/// The known-failures file for the failures of a run, sorted.
pub fn render_known(reports: &[SuiteReport]) -> String {
    render(
        reports,
        "# W3C SPARQL tests that fail today: `<test IRI> <reason>` per line.\n\
         # The tern-w3c test fails on a failure not listed here, and on a listed test that\n\
         # passes (remove its line). Regenerate: TERN_W3C_UPDATE=1 cargo test -p tern-w3c\n",
        &BTreeMap::new(),
    )
}

/// The known-failures file for the failures of a run, sorted, regenerated
/// from the `previous` file: its leading comment lines stay its header and
/// a test listed there that still fails keeps its reason, so hand-written
/// reasons survive; a new failure gets its failure message.
pub fn render_known_keeping(reports: &[SuiteReport], previous: &str) -> String {
    let header: String = previous
        .lines()
        .take_while(|l| l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    render(reports, &header, &parse_known(previous))
}

fn render(reports: &[SuiteReport], header: &str, reasons: &BTreeMap<String, String>) -> String {
    let mut lines: Vec<String> = reports
        .iter()
        .flat_map(|r| &r.results)
        .filter_map(|r| match &r.outcome {
            Outcome::Fail(reason) => {
                let reason = reasons.get(&r.id).unwrap_or(reason);
                Some(format!("{} {reason}", r.id))
            }
            _ => None,
        })
        .collect();
    lines.sort();
    let mut out = header.to_owned();
    for line in lines {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// What a run says about the known failures.
#[derive(Debug, Default)]
pub struct KnownCheck {
    /// Failing tests that are not listed: (IRI, reason).
    pub regressions: Vec<(String, String)>,
    /// Listed tests that pass now.
    pub fixed: Vec<String>,
    /// Listed tests that this run skipped or does not have.
    pub stale: Vec<String>,
}

impl KnownCheck {
    pub fn is_ok(&self) -> bool {
        self.regressions.is_empty() && self.fixed.is_empty() && self.stale.is_empty()
    }
}

/// Compares a run with the known failures. With `partial` (a filtered run),
/// listed tests that did not run are not reported as stale.
pub fn check_known(
    reports: &[SuiteReport],
    known: &BTreeMap<String, String>,
    partial: bool,
) -> KnownCheck {
    let mut check = KnownCheck::default();
    let mut ran: HashMap<&str, &Outcome> = HashMap::new();
    for r in reports.iter().flat_map(|r| &r.results) {
        ran.insert(&r.id, &r.outcome);
        if let Outcome::Fail(reason) = &r.outcome {
            if !known.contains_key(&r.id) {
                check.regressions.push((r.id.clone(), reason.clone()));
            }
        }
    }
    for iri in known.keys() {
        match ran.get(iri.as_str()) {
            Some(Outcome::Pass) => check.fixed.push(iri.clone()),
            Some(Outcome::Fail(_)) => {}
            Some(Outcome::Skip(_)) => check.stale.push(iri.clone()),
            None if !partial => check.stale.push(iri.clone()),
            None => {}
        }
    }
    check
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::TestResult;

    fn report(results: &[(&str, Outcome)]) -> SuiteReport {
        SuiteReport {
            name: "s".to_owned(),
            results: results
                .iter()
                .map(|(id, o)| TestResult {
                    id: (*id).to_owned(),
                    outcome: o.clone(),
                })
                .collect(),
        }
    }

    #[test]
    fn known_failures_only_shrink() {
        let run = [report(&[
            ("http://t/a", Outcome::Pass),
            ("http://t/b", Outcome::Fail("wrong result: x".to_owned())),
            ("http://t/c", Outcome::Fail("panic: boom".to_owned())),
            ("http://t/d", Outcome::Skip("update")),
        ])];
        let rendered = render_known(&run);
        let known = parse_known(&rendered);
        assert_eq!(known.len(), 2);
        assert_eq!(known["http://t/b"], "wrong result: x");
        assert!(check_known(&run, &known, false).is_ok());

        let known = parse_known("<http://t/a> old\nhttp://t/b r\n# c\nhttp://t/z gone\n");
        let check = check_known(&run, &known, false);
        assert_eq!(check.fixed, vec!["http://t/a".to_owned()]);
        assert_eq!(
            check.regressions,
            vec![("http://t/c".to_owned(), "panic: boom".to_owned())]
        );
        assert_eq!(check.stale, vec!["http://t/z".to_owned()]);
        assert!(check_known(&run, &known, true).stale.is_empty());
    }

    #[test]
    fn regenerating_keeps_the_header_and_listed_reasons() {
        let run = [report(&[
            ("http://t/a", Outcome::Fail("wrong result: x".to_owned())),
            ("http://t/b", Outcome::Fail("wrong result: y".to_owned())),
            ("http://t/c", Outcome::Pass),
        ])];
        let previous = "# header\n# more\nhttp://t/a why it fails\nhttp://t/c fixed\n";
        assert_eq!(
            render_known_keeping(&run, previous),
            "# header\n# more\nhttp://t/a why it fails\nhttp://t/b wrong result: y\n"
        );
    }

    #[test]
    fn classes_of_reasons() {
        assert_eq!(
            reason_class("query error: not supported yet: property paths: more"),
            "query error: not supported yet: property paths"
        );
        assert_eq!(
            reason_class("panic: not yet implemented at src/x.rs:3"),
            "panic: not yet implemented"
        );
        assert_eq!(
            reason_class("wrong result: expected 2 solutions, got 3; missing x"),
            "wrong result"
        );
        assert!(summary(&[report(&[("a", Outcome::Pass)])], 1.0).contains("100.0%"));
    }
}
