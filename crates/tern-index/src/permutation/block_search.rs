//! Searches inside one decoded block: the rows of a range of keys, found a
//! column at a time. Index joins do one per left row, so these are the
//! innermost loops of a lookup.

use std::cmp::Ordering;
use std::ops::Range;

/// Index of the first `i` in `0..n` for which `pred` is false (`pred` must be
/// true then false over the range).
pub(crate) fn partition(n: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The rows `i` of a decoded block with `lo <= row i <= hi`, on the first
/// `lo.len()` columns. While `lo` and `hi` agree on a column, the range
/// narrows to the rows holding that value by a search of that column alone
/// (none when the range's first and last rows have it): an index join's
/// lookup binds all but one or two columns, and searching the four column
/// arrays row by row cost it a cache miss per column per probe.
pub(crate) fn rows_between(columns: &[Vec<u64>], lo: &[u64], hi: &[u64]) -> Range<usize> {
    let (mut start, mut end) = (0, columns.first().map_or(0, Vec::len));
    let mut c = 0;
    while c < lo.len() && lo[c] == hi[c] && start < end {
        let (column, value) = (&columns[c][start..end], lo[c]);
        if column[0] != value || column[column.len() - 1] != value {
            let first = lower_bound(column, value);
            let past = first + gallop(&column[first..], |x| x <= value);
            end = start + past;
            start += first;
        }
        c += 1;
    }
    if c == lo.len() || start >= end {
        return start..end.max(start);
    }
    // The rows in range agree with `lo` and `hi` before column `c`.
    let rest = &columns[c..];
    let n = end - start;
    let first = partition(n, |i| compare_row(rest, start + i, &lo[c..]).is_lt());
    let past = first
        + partition(n - first, |i| {
            compare_row(rest, start + first + i, &hi[c..]).is_le()
        });
    start + first..start + past
}

/// Index of the first value of a sorted column not below `value`. IDs of
/// one kind in a block are spread fairly evenly (subjects of a predicate
/// are numbered in term order), so the search starts where `value` would
/// lie if they were even, and gallops from there: a lookup touches two or
/// three cache lines of the column instead of the twelve of a binary
/// search, each a miss when lookups jump between blocks.
pub(crate) fn lower_bound(column: &[u64], value: u64) -> usize {
    let n = column.len();
    if n < 32 {
        return column.partition_point(|&x| x < value);
    }
    let (first, last) = (column[0], column[n - 1]);
    if value <= first {
        return 0;
    }
    if value > last {
        return n;
    }
    // first < value <= last, so last > first and the guess is in 0..n.
    let guess = ((u128::from(value - first) * (n - 1) as u128) / u128::from(last - first)) as usize;
    if column[guess] < value {
        return guess + 1 + gallop(&column[guess + 1..], |x| x < value);
    }
    // column[hi] >= value; the answer is at most hi (and at least 1).
    let mut hi = guess;
    let mut step = 1;
    let lo = loop {
        if hi < step {
            break 0;
        }
        if column[hi - step] < value {
            break hi - step + 1;
        }
        hi -= step;
        step *= 2;
    };
    lo + column[lo..hi].partition_point(|&x| x < value)
}

/// Index of the first `x` of `values` for which `pred` is false (true
/// then false over the slice), searched from the start by doubling steps:
/// a lookup's run of equal values is mostly a row or a few, found in the
/// cache lines next to where the run starts.
pub(crate) fn gallop(values: &[u64], pred: impl Fn(u64) -> bool) -> usize {
    let mut step = 1;
    let mut known_true = 0;
    while known_true + step < values.len() && pred(values[known_true + step - 1]) {
        known_true += step;
        step *= 2;
    }
    let upper = (known_true + step).min(values.len());
    known_true + partition(upper - known_true, |i| pred(values[known_true + i]))
}

/// Row `i` of a block's columns against `key`, on the first `key.len()`
/// columns.
fn compare_row(columns: &[Vec<u64>], i: usize, key: &[u64]) -> Ordering {
    columns
        .iter()
        .zip(key)
        .map(|(c, k)| c[i].cmp(k))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sorted(mut values: Vec<u64>) -> Vec<u64> {
        values.sort_unstable();
        values
    }

    proptest! {
        #[test]
        fn lower_bound_is_the_partition_point(
            values in prop::collection::vec(prop_oneof![0u64..50, 0u64..u64::MAX, Just(u64::MAX)], 0..300),
            probe in prop_oneof![0u64..60, any::<u64>()],
            skew in 0u32..40,
        ) {
            // Skewed columns too: a few huge values after many small ones.
            let values = sorted(values.into_iter().map(|v| v >> (skew % 64)).collect());
            prop_assert_eq!(lower_bound(&values, probe), values.partition_point(|&x| x < probe));
            for &v in values.iter().step_by(7) {
                prop_assert_eq!(lower_bound(&values, v), values.partition_point(|&x| x < v));
            }
        }

        #[test]
        fn rows_between_is_the_range_a_row_comparison_finds(
            rows in prop::collection::vec((0u64..4, 0u64..6, 0u64..8, 0u64..3), 0..200),
            lo in (0u64..4, 0u64..6, 0u64..8, 0u64..3),
            width in 1usize..4,
            open in 1usize..4,
        ) {
            let mut rows: Vec<[u64; 4]> = rows.into_iter().map(|(a, b, c, d)| [a, b, c, d]).collect();
            rows.sort_unstable();
            rows.dedup();
            let columns: Vec<Vec<u64>> = (0..4).map(|c| rows.iter().map(|r| r[c]).collect()).collect();
            // A prefix of `width` columns bound, the next `open` columns free.
            let lo_row = [lo.0, lo.1, lo.2, lo.3];
            let mut lo_key = lo_row;
            let mut hi_key = lo_row;
            for c in width..(width + open).min(4) {
                lo_key[c] = 0;
                hi_key[c] = u64::MAX;
            }
            let expected: Vec<usize> = (0..rows.len())
                .filter(|&i| rows[i] >= lo_key && rows[i] <= hi_key)
                .collect();
            let found: Vec<usize> = rows_between(&columns, &lo_key, &hi_key).collect();
            prop_assert_eq!(found, expected);
        }
    }
}
