//! Column compression of one block.
//!
//! A column is written as one of:
//! - `0` + 8 bytes: every row has the same value (typical for the graph column
//!   and for the leading column of small relations);
//! - `1` + varints, or `2` + zstd(varints): each value as the difference to the
//!   previous row. Where the earlier columns of the row equal the previous row's,
//!   sorting makes the difference non-negative and it is written as is; elsewhere
//!   it is zig-zag encoded. Runs of equal leading values become runs of zero bytes,
//!   which zstd squeezes to almost nothing;
//! - `3` + varints, or `4` + zstd(varints), for the last triple column only:
//!   as `1`/`2`, except that where the middle column changes, the value is
//!   coded against the last value in the block that had the same middle
//!   column. In SPO that is the previous object *of the same predicate*:
//!   a product's price is near the last product's price, its label's ID near
//!   the last label's, where the previous row's object (another predicate's,
//!   often of another kind) is anywhere. On BSBM 10M this makes SPO's object
//!   column 41% smaller; the encoder keeps whichever form is smaller, so the
//!   other permutations, where it does not pay, keep the plain one.

use super::Row;
use crate::varint;

const CONSTANT: u8 = 0;
const VARINT: u8 = 1;
const VARINT_ZSTD: u8 = 2;
const BY_MIDDLE: u8 = 3;
const BY_MIDDLE_ZSTD: u8 = 4;
/// Middle-column values a block may have for the conditioned form: the
/// decoder's table of last values has twice as many slots.
const MAX_MIDDLE_VALUES: usize = 64;
const SLOTS: usize = 2 * MAX_MIDDLE_VALUES;
const ZSTD_LEVEL: i32 = 3;

/// Encodes the rows of a block; returns the bytes of each of the four columns.
pub fn encode(rows: &[Row]) -> [Vec<u8>; 4] {
    std::array::from_fn(|column| encode_column(rows, column))
}

fn encode_column(rows: &[Row], column: usize) -> Vec<u8> {
    let first = rows[0][column];
    if rows.iter().all(|r| r[column] == first) {
        let mut out = vec![CONSTANT];
        out.extend_from_slice(&first.to_le_bytes());
        return out;
    }
    let mut raw = Vec::with_capacity(rows.len() * 2);
    varint::write(first, &mut raw);
    for pair in rows.windows(2) {
        varint::write(delta(&pair[0], &pair[1], column, pair[0][column]), &mut raw);
    }
    let plain = compress((VARINT, VARINT_ZSTD), raw);
    if column != 2 {
        return plain;
    }
    match by_middle(rows) {
        Some(conditioned) => {
            let conditioned = compress((BY_MIDDLE, BY_MIDDLE_ZSTD), conditioned);
            if conditioned.len() < plain.len() {
                conditioned
            } else {
                plain
            }
        }
        None => plain,
    }
}

/// The varint of `row[column]` against `reference`: as is where the earlier
/// columns equal the previous row's (sorting makes it non-negative),
/// zig-zag otherwise.
#[inline]
fn delta(prev: &Row, row: &Row, column: usize, reference: u64) -> u64 {
    if prev[..column] == row[..column] {
        row[column].wrapping_sub(prev[column])
    } else {
        varint::zigzag(row[column].wrapping_sub(reference) as i64)
    }
}

/// The last column's varints coded against the last value of the same
/// middle column where the first two columns change; None when the block has
/// too many middle values for the decoder's table.
fn by_middle(rows: &[Row]) -> Option<Vec<u8>> {
    let mut table = MiddleTable::default();
    let mut raw = Vec::with_capacity(rows.len() * 2);
    varint::write(rows[0][2], &mut raw);
    let (slot, _) = table.claim(rows[0][1])?;
    table.values[slot] = rows[0][2];
    for pair in rows.windows(2) {
        let (prev, row) = (&pair[0], &pair[1]);
        let (slot, last) = table.claim(row[1])?;
        varint::write(delta(prev, row, 2, last.unwrap_or(prev[2])), &mut raw);
        table.values[slot] = row[2];
    }
    Some(raw)
}

fn compress((raw_kind, zstd_kind): (u8, u8), raw: Vec<u8>) -> Vec<u8> {
    let compressed = zstd::bulk::compress(&raw, ZSTD_LEVEL).unwrap_or_default();
    if !compressed.is_empty() && compressed.len() < raw.len() {
        [vec![zstd_kind], compressed].concat()
    } else {
        [vec![raw_kind], raw].concat()
    }
}

/// The last value seen per middle-column value: open addressing over a
/// fixed array, as the decoder does it once per row.
struct MiddleTable {
    keys: [u64; SLOTS],
    values: [u64; SLOTS],
    used: [bool; SLOTS],
    count: usize,
}

impl Default for MiddleTable {
    fn default() -> MiddleTable {
        MiddleTable {
            keys: [0; SLOTS],
            values: [0; SLOTS],
            used: [false; SLOTS],
            count: 0,
        }
    }
}

impl MiddleTable {
    /// The slot of `key` and the last value stored there (None for a key
    /// not seen before, whose slot is now taken); None when a new key would
    /// be one more than [`MAX_MIDDLE_VALUES`]. One probe serves the read and
    /// the write that follows it.
    #[inline]
    fn claim(&mut self, key: u64) -> Option<(usize, Option<u64>)> {
        let mut slot = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 57) as usize % SLOTS;
        while self.used[slot] && self.keys[slot] != key {
            slot = (slot + 1) % SLOTS;
        }
        if self.used[slot] {
            return Some((slot, Some(self.values[slot])));
        }
        if self.count == MAX_MIDDLE_VALUES {
            return None;
        }
        self.used[slot] = true;
        self.keys[slot] = key;
        self.count += 1;
        Some((slot, None))
    }
}

/// Decodes the first `columns.len()` columns of a block of `rows` rows. Columns
/// are given one after another because each depends on the ones before it.
pub fn decode(bytes: &[&[u8]], rows: usize) -> Option<Vec<Vec<u64>>> {
    let mut out: Vec<Vec<u64>> = Vec::with_capacity(bytes.len());
    // same_prefix[i]: row i equals row i-1 on all columns decoded so far.
    let mut same_prefix = vec![true; rows];
    for (column, data) in bytes.iter().enumerate() {
        let values = if matches!(data.first(), Some(&(BY_MIDDLE | BY_MIDDLE_ZSTD))) {
            decode_by_middle(data, rows, &same_prefix, out.get(1)?)?
        } else {
            decode_column(data, rows, &same_prefix)?
        };
        if column + 1 < bytes.len() {
            for i in 1..rows {
                same_prefix[i] &= values[i] == values[i - 1];
            }
        }
        out.push(values);
    }
    Some(out)
}

/// The varints of a column, decompressed if they were.
fn varints<'a>(kind: u8, body: &'a [u8], rows: usize, raw: &'a mut Vec<u8>) -> Option<&'a [u8]> {
    match kind {
        VARINT | BY_MIDDLE => Some(body),
        VARINT_ZSTD | BY_MIDDLE_ZSTD => {
            *raw = crate::thread_zstd::decompress(body, rows * 10)?;
            Some(raw)
        }
        _ => None,
    }
}

fn decode_column(data: &[u8], rows: usize, same_prefix: &[bool]) -> Option<Vec<u64>> {
    let (&kind, body) = data.split_first()?;
    if kind == CONSTANT {
        let value = u64::from_le_bytes(body.get(..8)?.try_into().ok()?);
        return Some(vec![value; rows]);
    }
    let mut raw = Vec::new();
    let varints = varints(kind, body, rows, &mut raw)?;
    // Pushed into reserved room, not written over zeros: a block's columns
    // are 32 KiB each, and zeroing them first was a tenth of a lookup's
    // time on a block cache miss.
    let mut values = Vec::with_capacity(rows);
    let mut pos = 0;
    let mut prev = varint::read(varints, &mut pos)?;
    values.push(prev);
    for &same in &same_prefix[1..rows] {
        let delta = varint::read_fast(varints, &mut pos)?;
        // Both arms computed and one picked: no branch to mispredict where
        // the leading columns change every few rows.
        let signed = varint::unzigzag(delta) as u64;
        prev = prev.wrapping_add(if same { delta } else { signed });
        values.push(prev);
    }
    Some(values)
}

/// The last column in the form coded against the last value of the same
/// middle column (see [`by_middle`]).
fn decode_by_middle(
    data: &[u8],
    rows: usize,
    same_prefix: &[bool],
    middle: &[u64],
) -> Option<Vec<u64>> {
    let (&kind, body) = data.split_first()?;
    let mut raw = Vec::new();
    let varints = varints(kind, body, rows, &mut raw)?;
    let mut table = MiddleTable::default();
    let mut values = Vec::with_capacity(rows);
    let mut pos = 0;
    let mut prev = varint::read(varints, &mut pos)?;
    values.push(prev);
    let (slot, _) = table.claim(middle[0])?;
    table.values[slot] = prev;
    for i in 1..rows {
        let delta = varint::read_fast(varints, &mut pos)?;
        let (slot, last) = table.claim(middle[i])?;
        prev = if same_prefix[i] {
            prev.wrapping_add(delta)
        } else {
            last.unwrap_or(prev)
                .wrapping_add(varint::unzigzag(delta) as u64)
        };
        values.push(prev);
        table.values[slot] = prev;
    }
    Some(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_round_trip() {
        let mut rows: Vec<Row> = (0..5000u64)
            .map(|i| {
                [
                    i / 100,
                    (i * 7919) % 13,
                    (i * 104_729) % 100_003 + (1 << 61),
                    0,
                ]
            })
            .collect();
        rows.sort_unstable();
        rows.dedup();
        let encoded = encode(&rows);
        let slices: Vec<&[u8]> = encoded.iter().map(Vec::as_slice).collect();
        let decoded = decode(&slices, rows.len()).unwrap();
        for (i, row) in rows.iter().enumerate() {
            for c in 0..4 {
                assert_eq!(decoded[c][i], row[c]);
            }
        }
        let partial = decode(&slices[..2], rows.len()).unwrap();
        assert_eq!(partial.len(), 2);
        assert_eq!(partial[1], decoded[1]);
        assert_eq!(encoded[3].len(), 9, "a constant graph column costs 9 bytes");
    }

    fn round_trip(rows: &[Row]) -> [Vec<u8>; 4] {
        let encoded = encode(rows);
        let slices: Vec<&[u8]> = encoded.iter().map(Vec::as_slice).collect();
        let decoded = decode(&slices, rows.len()).unwrap();
        for (i, row) in rows.iter().enumerate() {
            for c in 0..4 {
                assert_eq!(decoded[c][i], row[c], "row {i} column {c}");
            }
        }
        encoded
    }

    /// SPO-like rows: each subject has some of 12 predicates, and each
    /// predicate's objects lie in a range of their own.
    fn subject_rows(subjects: u64, predicates: u64) -> Vec<Row> {
        let mut rows = Vec::new();
        for s in 0..subjects {
            for p in 0..predicates {
                if (s * 31 + p * 17) % 5 == 0 {
                    continue;
                }
                let o = (p << 40) + s * 1_000 + (s * p * 7_919) % 900;
                rows.push([s + 1_000_000, (2 << 60) + p * 977, o, 0]);
                if p % 4 == 0 {
                    rows.push([s + 1_000_000, (2 << 60) + p * 977, o + 3, 0]);
                }
            }
        }
        rows.sort_unstable();
        rows
    }

    #[test]
    fn objects_coded_against_the_same_predicates_last_object() {
        let rows = subject_rows(400, 12);
        let encoded = round_trip(&rows);
        assert!(
            matches!(encoded[2][0], BY_MIDDLE | BY_MIDDLE_ZSTD),
            "the conditioned form is smaller here"
        );
        // Too many middle values for the decoder's table: the plain form.
        let many = subject_rows(40, 100);
        let encoded = round_trip(&many);
        assert!(matches!(encoded[2][0], VARINT | VARINT_ZSTD));
        // Only the third column is ever conditioned; a single row works.
        round_trip(&rows[..1]);
        assert!(encode(&rows).iter().take(2).all(|c| c[0] < BY_MIDDLE));
        // A conditioned column without the columns before it is corrupt.
        let conditioned = encode(&rows)[2].clone();
        assert!(decode(&[&conditioned], rows.len()).is_none());
    }
}
