//! Column compression of one block.
//!
//! A column is written as one of:
//! - `0` + 8 bytes: every row has the same value (typical for the graph column
//!   and for the leading column of small relations);
//! - `1` + varints, or `2` + zstd(varints): each value as the difference to the
//!   previous row. Where the earlier columns of the row equal the previous row's,
//!   sorting makes the difference non-negative and it is written as is; elsewhere
//!   it is zig-zag encoded. Runs of equal leading values become runs of zero bytes,
//!   which zstd squeezes to almost nothing.

use super::Row;
use crate::varint;

const CONSTANT: u8 = 0;
const VARINT: u8 = 1;
const VARINT_ZSTD: u8 = 2;
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
        let (prev, row) = (&pair[0], &pair[1]);
        let delta = if prev[..column] == row[..column] {
            row[column].wrapping_sub(prev[column])
        } else {
            varint::zigzag(row[column].wrapping_sub(prev[column]) as i64)
        };
        varint::write(delta, &mut raw);
    }
    let compressed = zstd::bulk::compress(&raw, ZSTD_LEVEL).unwrap_or_default();
    if !compressed.is_empty() && compressed.len() < raw.len() {
        [vec![VARINT_ZSTD], compressed].concat()
    } else {
        [vec![VARINT], raw].concat()
    }
}

/// Decodes the first `columns.len()` columns of a block of `rows` rows. Columns
/// are given one after another because each depends on the ones before it.
pub fn decode(bytes: &[&[u8]], rows: usize) -> Option<Vec<Vec<u64>>> {
    let mut out: Vec<Vec<u64>> = Vec::with_capacity(bytes.len());
    // same_prefix[i]: row i equals row i-1 on all columns decoded so far.
    let mut same_prefix = vec![true; rows];
    for (column, data) in bytes.iter().enumerate() {
        let values = decode_column(data, rows, &same_prefix)?;
        if column + 1 < bytes.len() {
            for i in 1..rows {
                same_prefix[i] &= values[i] == values[i - 1];
            }
        }
        out.push(values);
    }
    Some(out)
}

fn decode_column(data: &[u8], rows: usize, same_prefix: &[bool]) -> Option<Vec<u64>> {
    let (&kind, body) = data.split_first()?;
    let raw;
    let varints: &[u8] = match kind {
        CONSTANT => {
            let value = u64::from_le_bytes(body.get(..8)?.try_into().ok()?);
            return Some(vec![value; rows]);
        }
        VARINT => body,
        VARINT_ZSTD => {
            raw = crate::thread_zstd::decompress(body, rows * 10)?;
            &raw
        }
        _ => return None,
    };
    let mut values = vec![0u64; rows];
    let mut pos = 0;
    let mut prev = varint::read(varints, &mut pos)?;
    values[0] = prev;
    for (value, &same) in values[1..].iter_mut().zip(&same_prefix[1..rows]) {
        let delta = varint::read_fast(varints, &mut pos)?;
        // Both arms computed and one picked: no branch to mispredict where
        // the leading columns change every few rows.
        let signed = varint::unzigzag(delta) as u64;
        prev = prev.wrapping_add(if same { delta } else { signed });
        *value = prev;
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
}
