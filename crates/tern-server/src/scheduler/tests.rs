use super::run_queue::service_level;
use super::*;
use std::sync::mpsc;

/// Counts to `total` in steps of one per millisecond, reporting when
/// it finishes.
struct Counter {
    left: u32,
    /// Steps after which a turn ends, whatever the time (so that a
    /// test's turns do not depend on how loaded the machine is).
    per_turn: u32,
    deadline: Option<Instant>,
    name: &'static str,
    done: mpsc::Sender<&'static str>,
}

impl Task for Counter {
    fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    fn run(&mut self, until: Option<Instant>) -> Step {
        let mut steps = 0;
        while self.left > 0 {
            if until.is_some_and(|u| Instant::now() >= u) || steps == self.per_turn {
                return Step::Yielded;
            }
            std::thread::sleep(Duration::from_millis(1));
            self.left -= 1;
            steps += 1;
        }
        let _ = self.done.send(self.name);
        Step::Done
    }
}

/// A task counting `left` milliseconds that reports `name` on `done`.
fn counter(left: u32, name: &'static str, done: &mpsc::Sender<&'static str>) -> Box<Counter> {
    Box::new(Counter {
        left,
        per_turn: u32::MAX,
        deadline: None,
        name,
        done: done.clone(),
    })
}

/// A queue entry for a task that does nothing.
fn idle_entry(turns: u32, admitted: u64, blocked: bool) -> Entry {
    Entry {
        task: counter(0, "", &mpsc::channel().0),
        turns,
        started: false,
        since_ms: admitted,
        admitted,
        attained: Duration::ZERO,
        blocked,
        deadline: None,
    }
}

#[test]
fn a_short_task_passes_a_long_one_with_quanta_and_not_without() {
    for (quantum, expected_first) in [(Some(Duration::from_millis(5)), "short"), (None, "long")] {
        let scheduler = Scheduler::new(1, 8, quantum);
        let (tx, rx) = mpsc::channel();
        let task = |left, name| counter(left, name, &tx);
        scheduler.submit(task(300, "long")).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        scheduler.submit(task(5, "short")).unwrap();
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(10)).unwrap(),
            expected_first
        );
        rx.recv_timeout(Duration::from_secs(10)).unwrap();
        if quantum.is_some() {
            assert!(scheduler.yields() > 0);
        }
    }
}

#[test]
fn new_tasks_go_first_then_the_oldest_and_old_ones_are_owed_time() {
    // A third of a turn is a whole number of milliseconds.
    let quantum = Duration::from_millis(9);
    let mut queue = RunQueue::new(Some(quantum));
    let entry = |turns, admitted| idle_entry(turns, admitted, false);
    // Old tasks arrive in the order 2, 0, 1; then new ones.
    for admitted in [2, 0, 1] {
        queue.push(entry(FRESH_TURNS + 5, admitted));
    }
    for admitted in 10..20 {
        queue.push(entry(0, admitted));
    }
    let mut order = Vec::new();
    while let Some(e) = queue.pop() {
        order.push(e.admitted);
        // Every turn takes a quantum.
        queue.account(e.turns < FRESH_TURNS, quantum);
    }
    // Old tasks are owed a third of each new one's turn: one old turn
    // (4 quanta) after twelve new turns' worth, so here only once the
    // new ones are gone; then the oldest first.
    assert_eq!(order, [10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 0, 1, 2]);

    let mut queue = RunQueue::new(Some(quantum));
    queue.push(entry(FRESH_TURNS, 0));
    for admitted in 10..40 {
        queue.push(entry(0, admitted));
    }
    let mut old_at = Vec::new();
    for pick in 0.. {
        let Some(e) = queue.pop() else { break };
        if e.admitted == 0 {
            old_at.push(pick);
            if old_at.len() == 2 {
                break;
            }
            queue.account(false, quantum * AGED_QUANTA);
            queue.push(entry(FRESH_TURNS + 1, 0));
        } else {
            queue.account(true, quantum);
        }
    }
    // While new tasks keep coming, the old one still gets a turn after
    // every twelve new turns.
    assert_eq!(old_at, [12, 25]);
}

#[test]
fn old_tasks_that_ran_less_go_first_then_the_oldest() {
    // An aged turn is 40 ms: levels 0 below 40 ms, 1 below 80 ms, and
    // 7 from 2.56 s to 5.12 s.
    let mut queue = RunQueue::new(Some(Duration::from_millis(10)));
    let entry = |admitted, ran_ms| Entry {
        attained: Duration::from_millis(ran_ms),
        ..idle_entry(FRESH_TURNS, admitted, false)
    };
    for (admitted, ran_ms) in [(0, 5_000), (1, 50), (2, 30), (3, 60), (4, 3_000)] {
        queue.push(entry(admitted, ran_ms));
    }
    let order: Vec<u64> = std::iter::from_fn(|| queue.pop())
        .map(|e| e.admitted)
        .collect();
    assert_eq!(order, [2, 1, 3, 0, 4]);
    assert_eq!(service_level(Duration::from_secs(1), Duration::ZERO), 0);
}

#[test]
fn tasks_past_their_deadline_go_first_unless_blocked_on_their_client() {
    let mut queue = RunQueue::new(Some(Duration::from_millis(10)));
    let past = Instant::now() - Duration::from_millis(1);
    let later = Instant::now() + Duration::from_secs(60);
    let entry = |turns, admitted, blocked, deadline| Entry {
        task: Box::new(Counter {
            deadline,
            ..*counter(0, "", &mpsc::channel().0)
        }),
        attained: Duration::from_secs(u64::from(turns)),
        ..idle_entry(turns, admitted, blocked)
    };
    queue.push(entry(0, 0, false, None));
    queue.push(entry(0, 1, false, Some(later)));
    queue.push(entry(FRESH_TURNS + 9, 2, false, Some(past)));
    queue.push(entry(FRESH_TURNS + 9, 3, true, Some(past)));
    queue.push(entry(0, 4, false, Some(past)));
    let order: Vec<u64> = std::iter::from_fn(|| queue.pop())
        .map(|e| e.admitted)
        .collect();
    // The two expired ones by deadline (the same: then by admission),
    // then the fresh ones and the old ones as usual.
    assert_eq!(order, [2, 4, 0, 1, 3]);
    assert!(queue.deadlines.is_empty());
}

#[test]
fn blocked_old_tasks_wait_behind_the_others() {
    let mut queue = RunQueue::new(Some(Duration::from_millis(10)));
    let entry = |admitted, blocked| idle_entry(FRESH_TURNS, admitted, blocked);
    queue.push(entry(0, true));
    queue.push(entry(1, false));
    queue.push(entry(2, true));
    queue.push(entry(3, false));
    let order: Vec<u64> = std::iter::from_fn(|| queue.pop())
        .map(|e| e.admitted)
        .collect();
    assert_eq!(order, [1, 3, 0, 2]);
}

#[test]
fn a_continued_query_waits_with_the_old_ones_by_its_age() {
    // The continued query started just now, or a minute ago: it waits
    // behind the older query, or ahead of it.
    for (started_ago_ms, expected) in [
        (0, ["new", "first", "next page"]),
        (60_000, ["new", "next page", "first"]),
    ] {
        // Turns end after 10 steps, well before the quantum: "first"
        // has two fresh turns and ends in its first aged one, below
        // one aged turn of service (level 0, a continued query's).
        let scheduler = Scheduler::new(1, 8, Some(Duration::from_secs(1)));
        let (tx, rx) = mpsc::channel();
        let task = |left, name| {
            Box::new(Counter {
                per_turn: 10,
                ..*counter(left, name, &tx)
            })
        };
        // Occupies the worker while the others queue up.
        scheduler.submit(task(25, "first")).unwrap();
        std::thread::sleep(Duration::from_millis(2));
        let started_at_ms = now_ms() - started_ago_ms;
        scheduler
            .submit_continuation(task(3, "next page"), started_at_ms)
            .unwrap();
        scheduler.submit(task(3, "new")).unwrap();
        let order: Vec<&str> = (0..3)
            .map(|_| rx.recv_timeout(Duration::from_secs(10)).unwrap())
            .collect();
        // The new task first; then the old ones, oldest first.
        assert_eq!(
            order, expected,
            "continued query started {started_ago_ms} ms ago"
        );
        // Every task is counted out again.
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!((scheduler.active(), scheduler.queued()), (0, 0));
    }
}

#[test]
fn admission_is_bounded() {
    let scheduler = Scheduler::new(1, 1, None);
    let (tx, rx) = mpsc::channel();
    let long = || counter(200, "x", &tx);
    scheduler.submit(long()).unwrap();
    scheduler.submit(long()).unwrap();
    assert!(scheduler.submit(long()).is_err(), "one worker + one queued");
    rx.recv_timeout(Duration::from_secs(10)).unwrap();
    // The finished task's place is free again.
    std::thread::sleep(Duration::from_millis(5));
    scheduler.submit(long()).unwrap();
}

/// Reports the name of the thread it ran on.
struct RanOn(mpsc::Sender<String>);

impl Task for RanOn {
    fn run(&mut self, _until: Option<Instant>) -> Step {
        let name = std::thread::current().name().unwrap_or("").to_string();
        let _ = self.0.send(name);
        Step::Done
    }
}

#[test]
fn a_new_task_has_its_first_turn_here_only_when_a_worker_is_free() {
    let scheduler = Scheduler::new(1, 8, Some(Duration::from_millis(5)));
    let here = std::thread::current().name().unwrap().to_string();
    let (tx, rx) = mpsc::channel();
    let turn = Duration::from_millis(1);
    // Idle: run here, done before submit_here returns.
    scheduler
        .submit_here(Box::new(RanOn(tx.clone())), turn)
        .unwrap();
    assert_eq!(rx.try_recv().unwrap(), here);
    assert_eq!((scheduler.turns_here(), scheduler.active()), (1, 0));

    // Not done in its first turn: it goes on on a worker.
    let (done_tx, done_rx) = mpsc::channel();
    scheduler
        .submit_here(counter(20, "long", &done_tx), turn)
        .unwrap();
    assert_eq!(done_rx.recv_timeout(Duration::from_secs(10)), Ok("long"));
    assert_eq!(scheduler.turns_here(), 2);
    assert!(scheduler.yields() >= 1);

    // The one worker busy: the task waits for it.
    scheduler.submit(counter(100, "busy", &done_tx)).unwrap();
    while scheduler.running() == 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    scheduler.submit_here(Box::new(RanOn(tx)), turn).unwrap();
    assert_eq!(scheduler.turns_here(), 2);
    assert_eq!(done_rx.recv_timeout(Duration::from_secs(10)), Ok("busy"));
    let ran_on = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(ran_on.starts_with("tern-query-"), "{ran_on}");
}
