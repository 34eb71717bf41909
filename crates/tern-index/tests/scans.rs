//! Scans with bound prefixes and ranges return exactly the matching rows, in
//! order, and counts agree with scans.

mod common;

use std::ops::Bound;
use tern_index::builder::{build, Input, LoadOptions};
use tern_index::{Id, Index, Permutation, ScanRange};

/// A graph with skewed, overlapping subjects, predicates and objects, spread
/// over several blocks, with integer objects so ranges cover inline IDs too.
fn generate() -> String {
    let mut out = String::new();
    let mut state = 12345u64;
    let mut next = |m: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % m
    };
    for _ in 0..60_000 {
        let s = next(2000);
        let p = next(7) * next(3);
        let o = match next(3) {
            0 => format!("<http://e.org/r{}>", next(500)),
            1 => format!(
                "\"{}\"^^<http://www.w3.org/2001/XMLSchema#integer>",
                next(1000) as i64 - 500
            ),
            _ => format!("\"text {}\"", next(3000)),
        };
        let g = if next(10) == 0 {
            " <http://e.org/g>"
        } else {
            ""
        };
        out.push_str(&format!(
            "<http://e.org/r{s}> <http://e.org/p{p}> {o}{g} .\n"
        ));
    }
    out
}

/// The generated graph loaded into an index in a fresh directory (kept alive
/// by the returned guard).
fn generated_index() -> (tempfile::TempDir, Index) {
    let tmp = tempfile::tempdir().unwrap();
    let target = common::build_from_texts(tmp.path(), &[("data.nq", &generate())]);
    let index = Index::open(&target).unwrap();
    (tmp, index)
}

fn all_rows(index: &Index, perm: Permutation) -> Vec<[u64; 4]> {
    index
        .scan(perm, &[], ScanRange::ALL)
        .flat_map(|b| {
            let b = b.unwrap();
            (0..b.len()).map(move |i| b.row(i)).collect::<Vec<_>>()
        })
        .collect()
}

fn in_range(v: u64, range: &ScanRange) -> bool {
    let lo = match range.start {
        Bound::Unbounded => true,
        Bound::Included(x) => v >= x.0,
        Bound::Excluded(x) => v > x.0,
    };
    let hi = match range.end {
        Bound::Unbounded => true,
        Bound::Included(x) => v <= x.0,
        Bound::Excluded(x) => v < x.0,
    };
    lo && hi
}

#[test]
fn scans_and_counts_match_a_brute_force_filter() {
    let (_tmp, index) = generated_index();
    let mut checked = 0;
    for perm in Permutation::ALL {
        let rows = all_rows(&index, perm);
        assert_eq!(rows.len() as u64, index.stats().triples);
        assert!(
            rows.windows(2).all(|w| w[0] < w[1]),
            "{perm:?} sorted and distinct"
        );
        assert!(
            index.permutation(perm).block_count() > 1,
            "the test must span several blocks"
        );
        // Prefixes taken from rows spread over the permutation, of every length.
        for (n, sample) in rows.iter().step_by(rows.len() / 25).enumerate() {
            for len in 0..=3 {
                let prefix: Vec<Id> = sample[..len].iter().map(|&v| Id(v)).collect();
                let pivot = Id(sample[len.min(3)]);
                let ranges = [
                    ScanRange::ALL,
                    ScanRange {
                        start: Bound::Included(pivot),
                        end: Bound::Unbounded,
                    },
                    ScanRange {
                        start: Bound::Excluded(pivot),
                        end: Bound::Included(Id(pivot.0.saturating_add(n as u64 * 1000))),
                    },
                    ScanRange {
                        start: Bound::Unbounded,
                        end: Bound::Excluded(pivot),
                    },
                ];
                for range in ranges {
                    let expected: Vec<[u64; 4]> = rows
                        .iter()
                        .filter(|r| r[..len] == sample[..len] && in_range(r[len], &range))
                        .copied()
                        .collect();
                    let got: Vec<[u64; 4]> = index
                        .scan(perm, &prefix, range)
                        .flat_map(|b| {
                            let b = b.unwrap();
                            (0..b.len()).map(move |i| b.row(i)).collect::<Vec<_>>()
                        })
                        .collect();
                    assert_eq!(got, expected, "{perm:?} prefix {prefix:?} range {range:?}");
                    let count = index.count(perm, &prefix, range).unwrap();
                    assert_eq!(
                        count as usize,
                        expected.len(),
                        "count {perm:?} {prefix:?} {range:?}"
                    );
                    checked += 1;
                }
            }
        }
        // A prefix that matches nothing.
        assert_eq!(
            index.count(perm, &[Id(u64::MAX)], ScanRange::ALL).unwrap(),
            0
        );
        assert_eq!(index.scan(perm, &[Id(u64::MAX)], ScanRange::ALL).count(), 0);
    }
    assert!(checked > 1000);
}

#[test]
fn predicate_statistics_match_scans() {
    let (_tmp, index) = generated_index();
    let stats = index.stats();
    assert!(stats.predicates.len() > 5);
    for p in &stats.predicates {
        let rows: Vec<[u64; 4]> = index
            .scan(Permutation::Pso, &[Id(p.predicate)], ScanRange::ALL)
            .flat_map(|b| {
                let b = b.unwrap();
                (0..b.len()).map(move |i| b.row(i)).collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(rows.len() as u64, p.triples);
        let subjects: std::collections::BTreeSet<u64> = rows.iter().map(|r| r[1]).collect();
        let objects: std::collections::BTreeSet<u64> = rows.iter().map(|r| r[2]).collect();
        assert_eq!(subjects.len() as u64, p.distinct_subjects);
        assert_eq!(objects.len() as u64, p.distinct_objects);
        assert_eq!(
            index
                .count(Permutation::Pos, &[Id(p.predicate)], ScanRange::ALL)
                .unwrap(),
            p.triples
        );
    }
}

#[test]
fn a_small_cache_budget_bounds_decoded_blocks_and_changes_no_answer() {
    let (_tmp, index) = generated_index();
    let (_tmp2, small) = generated_index();
    let (vocabulary_budget, blocks_budget) = (150 << 10, 50 << 10);
    small.set_cache_budget(vocabulary_budget, blocks_budget);
    let all: Vec<u64> = (0..index.vocabulary().len()).collect();
    // Twice: the second time partly from the cache.
    for _ in 0..2 {
        for perm in Permutation::ALL {
            assert_eq!(all_rows(&small, perm), all_rows(&index, perm), "{perm:?}");
            let first = all_rows(&index, perm)[0];
            let prefix = [Id(first[0])];
            let looked_up = small.scan(perm, &prefix, ScanRange::ALL).count();
            assert_eq!(looked_up, index.scan(perm, &prefix, ScanRange::ALL).count());
        }
        assert_eq!(
            small.vocabulary().keys(&all).unwrap(),
            index.vocabulary().keys(&all).unwrap()
        );
    }
    let vocabulary = small.vocabulary().cache_bytes();
    assert!(
        vocabulary > 0 && vocabulary <= vocabulary_budget,
        "{vocabulary}"
    );
    let permutations: usize = Permutation::ALL
        .iter()
        .map(|&p| small.permutation(p).cache_bytes())
        .sum();
    assert!(permutations <= blocks_budget, "{permutations}");
}

#[test]
fn a_long_scan_keeps_only_its_first_blocks_and_a_short_one_all() {
    let full_block = 4096 * 4 * 8;
    let spo_scan = |budget_blocks: usize| {
        let (tmp, index) = generated_index();
        let blocks = index.permutation(Permutation::Spo).block_count();
        assert!(blocks > 2);
        index.set_cache_budget(64 << 20, budget_blocks * full_block);
        let rows = all_rows(&index, Permutation::Spo);
        let kept = index.permutation(Permutation::Spo).cache_bytes();
        (tmp, rows, kept, blocks)
    };
    let (_tmp, _, _, blocks) = spo_scan(1024);
    // Longer than a sixteenth of the budget: the first two blocks only.
    let (_tmp, long_rows, kept, _) = spo_scan(16 * (blocks - 1));
    assert!(kept <= 2 * full_block, "{kept}");
    // Within a sixteenth: every block, decoded once for the next scans.
    let (_tmp, short_rows, kept, _) = spo_scan(16 * blocks);
    assert!(kept > 2 * full_block, "{kept}");
    assert_eq!(long_rows, short_rows);
}

#[test]
fn vocabulary_lookups_agree_in_both_directions() {
    let (_tmp, index) = generated_index();
    let vocab = index.vocabulary();
    let all: Vec<u64> = (0..vocab.len()).collect();
    let keys = vocab.keys(&all).unwrap();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "vocabulary sorted");
    for (i, key) in keys.iter().enumerate() {
        assert_eq!(vocab.find(key).unwrap(), Some(i as u64));
        let term = index.term_of(Id::vocab(i as u64)).unwrap().unwrap();
        assert_eq!(
            index.id_of(term.as_ref()).unwrap(),
            Some(Id::vocab(i as u64))
        );
    }
    let mut missing = keys[keys.len() / 2].clone();
    missing.push(b'!');
    assert_eq!(vocab.find(&missing).unwrap(), None);
}

#[test]
fn a_tiny_memory_budget_spills_and_builds_the_same_index() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("data.nq");
    std::fs::write(&path, generate()).unwrap();
    let input = [Input::file(&path, None, None).unwrap()];
    let roomy = tmp.path().join("roomy");
    let tight = tmp.path().join("tight");
    build(&roomy, &input, &LoadOptions::default()).unwrap();
    // 1 MiB: many runs, a multi-way vocabulary merge and external sorts.
    let options = LoadOptions {
        memory: 1 << 20,
        ..LoadOptions::default()
    };
    build(&tight, &input, &options).unwrap();
    let (roomy, tight) = (Index::open(&roomy).unwrap(), Index::open(&tight).unwrap());
    assert_eq!(roomy.vocabulary().len(), tight.vocabulary().len());
    assert_eq!(roomy.stats(), tight.stats());
    for perm in Permutation::ALL {
        assert_eq!(all_rows(&roomy, perm), all_rows(&tight, perm), "{perm:?}");
    }
}

/// A scan resumed after any row it returned continues with exactly the rows
/// that followed it, with and without a bound prefix.
#[test]
fn resumed_scans_continue_after_the_saved_row() {
    let (_tmp, index) = generated_index();
    let rows_of = |iter: tern_index::permutation::ScanIter| -> Vec<[u64; 4]> {
        iter.flat_map(|b| {
            let b = b.unwrap();
            (0..b.len()).map(move |i| b.row(i)).collect::<Vec<_>>()
        })
        .collect()
    };
    for perm in [Permutation::Spo, Permutation::Pos, Permutation::Osp] {
        let all = all_rows(&index, perm);
        // The leading value with the most rows, so the prefix scan spans blocks.
        let mut counts = std::collections::HashMap::new();
        for row in &all {
            *counts.entry(row[0]).or_insert(0usize) += 1;
        }
        let leading = Id(*counts.iter().max_by_key(|(_, &n)| n).unwrap().0);
        for prefix in [vec![], vec![leading]] {
            let rows = rows_of(index.scan(perm, &prefix, ScanRange::ALL));
            assert!(rows.len() > 10, "{perm:?} {prefix:?}");
            for cut in [0, 1, rows.len() / 3, rows.len() - 2, rows.len() - 1] {
                let mut iter = index.scan(perm, &prefix, ScanRange::ALL);
                iter.resume_after(rows[cut]);
                assert_eq!(rows_of(iter), rows[cut + 1..], "{perm:?} after row {cut}");
            }
        }
    }
}

#[test]
fn one_permutation_may_use_the_whole_block_budget() {
    let (_tmp, index) = generated_index();
    let spo = index.permutation(Permutation::Spo);
    let block = 4096 * 4 * 8;
    index.set_cache_budget(1 << 20, 6 * block);
    // Lookups of one subject each, as an index join makes, over every block.
    let rows = all_rows(&index, Permutation::Spo);
    let mut subjects: Vec<u64> = rows.iter().map(|r| r[0]).collect();
    subjects.dedup();
    for s in subjects {
        index
            .scan(Permutation::Spo, &[Id(s)], ScanRange::ALL)
            .count();
    }
    // More than a sixth of the budget: the six share one.
    assert!(spo.block_count() >= 3, "{}", spo.block_count());
    assert!(spo.cache_bytes() > block, "{}", spo.cache_bytes());
    assert!(spo.cache_bytes() <= 6 * block);
}

/// Repeated lookups through one `Lookup` (which keeps the block it read
/// last and where its last lookup ended) give the rows of a scan, whatever
/// their order: ascending (the fast path), descending, random, repeated,
/// and prefixes of one to three columns, some spanning blocks.
#[test]
fn lookups_in_any_order_give_the_rows_of_scans() {
    let (_tmp, index) = generated_index();
    let mut state = 99u64;
    let mut next = |m: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % m
    };
    for perm in [Permutation::Spo, Permutation::Pos, Permutation::Osp] {
        let rows = all_rows(&index, perm);
        // Prefixes taken from real rows (and a few that match nothing).
        let mut prefixes: Vec<Vec<Id>> = (0..600)
            .map(|_| {
                let row = rows[next(rows.len() as u64) as usize];
                let len = 1 + next(3) as usize;
                let mut prefix: Vec<Id> = row[..len].iter().map(|&v| Id(v)).collect();
                if next(20) == 0 {
                    prefix[len - 1] = Id(prefix[len - 1].0 ^ 1);
                }
                prefix
            })
            .collect();
        let expected = |prefix: &[Id]| -> Vec<[u64; 4]> {
            rows.iter()
                .filter(|r| prefix.iter().zip(r.iter()).all(|(p, v)| p.0 == *v))
                .copied()
                .collect()
        };
        let check = |order: &[Vec<Id>], what: &str| {
            let mut lookup = index.lookup(perm);
            for prefix in order {
                let mut got = Vec::new();
                if let Some((lo, hi)) = Index::bounds(prefix, ScanRange::ALL) {
                    lookup.rows(lo, hi, |r| got.push(r)).unwrap();
                }
                assert_eq!(got, expected(prefix), "{perm:?}, {what}, prefix {prefix:?}");
            }
        };
        check(&prefixes, "random order");
        prefixes.sort();
        check(&prefixes, "ascending");
        let repeated: Vec<Vec<Id>> = prefixes
            .iter()
            .flat_map(|p| [p.clone(), p.clone()])
            .collect();
        check(&repeated, "each twice");
        prefixes.reverse();
        check(&prefixes, "descending");
    }
}
