//! Progress display: a live line on a terminal, plain log lines otherwise.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

pub struct Progress {
    enabled: bool,
    terminal: bool,
    phase: String,
    phase_start: Instant,
    last_print: Instant,
    interval: Duration,
}

impl Progress {
    pub fn new(enabled: bool) -> Progress {
        let terminal = std::io::stderr().is_terminal();
        let now = Instant::now();
        Progress {
            enabled,
            terminal,
            phase: String::new(),
            phase_start: now,
            last_print: now,
            interval: if terminal {
                Duration::from_millis(200)
            } else {
                Duration::from_secs(5)
            },
        }
    }

    pub fn phase(&mut self, name: &str) {
        self.end_line();
        self.phase = name.to_owned();
        self.phase_start = Instant::now();
        if self.enabled && !self.terminal {
            // Never eprintln!: a closed stderr (`tern load ... 2>&1 | head`)
            // must not stop the load.
            let _ = writeln!(std::io::stderr(), "{} [tern load] {name}", timestamp());
        }
    }

    /// Reports `done` statements; `fraction` of the input consumed when known.
    pub fn statements(&mut self, done: u64, fraction: Option<f64>) {
        if !self.enabled || self.last_print.elapsed() < self.interval {
            return;
        }
        self.last_print = Instant::now();
        let secs = self.phase_start.elapsed().as_secs_f64();
        let rate = done as f64 / secs.max(1e-9);
        let mut line = format!(
            "{}: {} statements, {}/s",
            self.phase,
            group(done),
            group(rate as u64)
        );
        if let Some(f) = fraction.filter(|f| *f > 0.01) {
            let eta = secs * (1.0 - f) / f;
            line.push_str(&format!(", {:.0}% read, ETA {:.0}s", f * 100.0, eta));
        }
        self.print(&line);
    }

    fn print(&self, line: &str) {
        let mut err = std::io::stderr().lock();
        if self.terminal {
            let _ = write!(err, "\r\x1b[2K[tern load] {line}");
        } else {
            let _ = writeln!(err, "{} [tern load] {line}", timestamp());
        }
        let _ = err.flush();
    }

    pub fn end_line(&mut self) {
        if self.enabled && self.terminal && !self.phase.is_empty() {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}

/// The time now in UTC, as plain log lines start (`2026-11-26T12:25:03Z`):
/// a load's log then says when each phase began and how long it took.
fn timestamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, mo, d) = crate::inline::civil_from_days((secs / 86_400) as i64);
    let day = secs % 86_400;
    format!(
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}Z",
        day / 3600,
        day / 60 % 60,
        day % 60
    )
}

/// 1234567 → "1,234,567".
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
