//! Memory budgets that hold: every operator that materializes state (hash
//! tables, sorted and grouped rows, DISTINCT sets, large output batches)
//! keeps a [`MemoryCharge`] saying how many bytes it holds now. The charges
//! of one query add up in its [`MemoryAccount`], checked against the query's
//! budget, and the accounts of all queries of an engine add up in its
//! [`SharedMemory`], checked against the server's. A charge that pushes
//! either over its budget fails that query (`EngineError::MemoryBudget`),
//! never the process; a charge dropped with its operator gives its bytes
//! back.

use crate::EngineError;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A query holding less than this share of the server's budget is small.
const SMALL_SHARE: u64 = 100;
/// Small queries may go past the server's budget by this share of it.
const RESERVE_SHARE: u64 = 4;

/// The memory all queries of one engine hold, and how much they may; and
/// what they wrote to disk because it did not fit.
#[derive(Debug, Default)]
pub struct SharedMemory {
    used: AtomicU64,
    budget: Option<u64>,
    pub spilled: SpillCounters,
}

/// Spill files made and bytes written to them, since the engine started.
#[derive(Debug, Default)]
pub struct SpillCounters {
    pub files: AtomicU64,
    pub bytes: AtomicU64,
}

impl SharedMemory {
    pub fn new(budget: Option<u64>) -> SharedMemory {
        SharedMemory {
            used: AtomicU64::new(0),
            budget,
            spilled: SpillCounters::default(),
        }
    }

    /// Bytes the running queries' operators hold now.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }
}

/// One query's memory: the sum of its operators' charges.
#[derive(Debug, Default)]
pub struct MemoryAccount {
    used: AtomicU64,
    peak: AtomicU64,
    budget: Option<u64>,
    shared: Option<Arc<SharedMemory>>,
}

impl MemoryAccount {
    pub fn new(budget: Option<u64>, shared: Option<Arc<SharedMemory>>) -> MemoryAccount {
        MemoryAccount {
            budget,
            shared,
            ..MemoryAccount::default()
        }
    }

    /// The query's own budget, if it has one.
    pub fn budget(&self) -> Option<u64> {
        self.budget
    }

    /// The engine's memory (and spill counters), if the query has one.
    pub fn shared(&self) -> Option<&Arc<SharedMemory>> {
        self.shared.as_ref()
    }

    /// The most the query's operators held at once.
    pub fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }

    fn add(&self, bytes: u64) {
        let now = self.used.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.peak.fetch_max(now, Ordering::Relaxed);
        if let Some(shared) = &self.shared {
            shared.used.fetch_add(bytes, Ordering::Relaxed);
        }
    }

    fn sub(&self, bytes: u64) {
        self.used.fetch_sub(bytes, Ordering::Relaxed);
        if let Some(shared) = &self.shared {
            shared.used.fetch_sub(bytes, Ordering::Relaxed);
        }
    }

    fn check(&self) -> Result<(), EngineError> {
        if let Some(budget) = self.budget {
            if self.used.load(Ordering::Relaxed) > budget {
                return Err(EngineError::MemoryBudget { budget });
            }
        }
        if let Some(shared) = &self.shared {
            if let Some(budget) = shared.budget {
                let used = shared.used.load(Ordering::Relaxed);
                // Past the budget, the queries that hold much of it end,
                // not a small one that happens to charge next: queries
                // holding less than a hundredth of the budget may use a
                // reserve of a quarter more.
                let small = self.used.load(Ordering::Relaxed) < budget / SMALL_SHARE;
                if used > budget && !(small && used <= budget + budget / RESERVE_SHARE) {
                    return Err(EngineError::ServerMemory { budget });
                }
            }
        }
        Ok(())
    }
}

/// The bytes one operator holds, counted in its query's account until the
/// charge is dropped.
#[derive(Debug)]
pub struct MemoryCharge {
    account: Arc<MemoryAccount>,
    /// Atomic only so that operators can charge through `&self`; one
    /// operator's charge is set from one thread at a time.
    bytes: AtomicU64,
}

impl MemoryCharge {
    pub fn new(account: Arc<MemoryAccount>) -> MemoryCharge {
        MemoryCharge {
            account,
            bytes: AtomicU64::new(0),
        }
    }

    /// The operator holds `bytes` now; fails when that puts its query or
    /// the server over budget (the bytes stay counted until the operator,
    /// and with it the charge, is dropped).
    pub fn set(&self, bytes: u64) -> Result<(), EngineError> {
        if self.set_unchecked(bytes) < bytes {
            self.account.check()
        } else {
            Ok(())
        }
    }
}

impl MemoryCharge {
    /// Whether the operator may hold `bytes` instead of what it holds now
    /// and leave its query and the server below [`SPILL_SHARE`] of their
    /// budgets: operators that can write their state to disk do so rather
    /// than grow past that (the rest of the budget is for the operators
    /// that cannot).
    pub fn fits(&self, bytes: u64) -> bool {
        let held = self.bytes.load(Ordering::Relaxed);
        let after = |used: u64| used.saturating_sub(held) + bytes;
        let below = |used: u64, budget: Option<u64>| {
            budget.is_none_or(|b| after(used) <= b / SPILL_SHARE.1 * SPILL_SHARE.0)
        };
        let account = &self.account;
        below(account.used.load(Ordering::Relaxed), account.budget)
            && account
                .shared
                .as_ref()
                .is_none_or(|s| below(s.used.load(Ordering::Relaxed), s.budget))
    }

    /// Counts `bytes` as held without checking the budgets (an operator
    /// that found they do not [`fit`](Self::fits) and is about to write
    /// them to disk); returns what it held before.
    pub fn set_unchecked(&self, bytes: u64) -> u64 {
        let before = self.bytes.swap(bytes, Ordering::Relaxed);
        if bytes > before {
            self.account.add(bytes - before);
        } else {
            self.account.sub(before - bytes);
        }
        before
    }
}

/// Operators that can spill keep their query and the server below this
/// share (numerator, denominator) of their memory budgets.
pub const SPILL_SHARE: (u64, u64) = (3, 4);

impl Drop for MemoryCharge {
    fn drop(&mut self) {
        self.account.sub(*self.bytes.get_mut());
    }
}

/// Bytes of `rows` rows of `width` IDs each held as one `Vec<Id>` per row:
/// the IDs, the vector's header and the allocator's overhead.
pub fn row_vec_bytes(rows: usize, width: usize) -> u64 {
    (rows * (width * 8 + 40)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_add_up_per_query_and_per_server_and_are_given_back() {
        let server = Arc::new(SharedMemory::new(Some(1000)));
        let a = Arc::new(MemoryAccount::new(Some(600), Some(server.clone())));
        let b = Arc::new(MemoryAccount::new(None, Some(server.clone())));
        let a1 = MemoryCharge::new(a.clone());
        let a2 = MemoryCharge::new(a.clone());
        a1.set(400).unwrap();
        // Each charge alone is within the budget; together they are not.
        assert!(matches!(
            a2.set(300),
            Err(EngineError::MemoryBudget { budget: 600 })
        ));
        a2.set(100).unwrap();
        assert_eq!((a.peak(), server.used()), (700, 500));
        let b1 = MemoryCharge::new(b.clone());
        assert!(matches!(
            b1.set(600),
            Err(EngineError::ServerMemory { budget: 1000 })
        ));
        drop(b1);
        drop(a1);
        assert_eq!(server.used(), 100);
        drop(a2);
        assert_eq!(server.used(), 0);
    }

    #[test]
    fn small_queries_use_a_reserve_past_the_server_budget() {
        let server = Arc::new(SharedMemory::new(Some(10_000)));
        let big = Arc::new(MemoryAccount::new(None, Some(server.clone())));
        let small = Arc::new(MemoryAccount::new(None, Some(server.clone())));
        let held = MemoryCharge::new(big.clone());
        held.set(10_000).unwrap();
        // The big query cannot grow past the budget...
        assert!(MemoryCharge::new(big.clone()).set(1).is_err());
        // ...a small one can, into the reserve (a quarter of the budget)...
        let light = MemoryCharge::new(small.clone());
        light.set(99).unwrap();
        // ...but not once it holds a hundredth of the budget.
        assert!(MemoryCharge::new(small.clone()).set(1).is_err());
        drop(light);
        held.set(12_500).unwrap_err();
        // Past the reserve nothing grows.
        assert!(MemoryCharge::new(small).set(1).is_err());
    }
}
