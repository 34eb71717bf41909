//! Just enough of Thrift's compact protocol to find where the fields of a
//! struct lie in its bytes, without decoding them, and to write the two
//! kinds of value the Parquet footer changes (a count of rows and the
//! header of the list of row groups).
//!
//! Tern writes a Parquet file's footer from pieces the parquet crate
//! serialized (`parquet_footer.rs`): the crate keeps the metadata of every
//! row group in memory until the footer, and its Thrift writer is private
//! to it. A struct's bytes in the compact protocol do not depend on where
//! the struct is (field ids are deltas from the struct's own previous
//! field), so a row group's entry can be cut out of one footer and put in
//! another unchanged.
//!
//! Not the `thrift` crate's `TCompactInputProtocol::skip`, though the
//! parquet crate depends on it: it reads a binary value as a UTF-8
//! string and fails where it is not one, as the statistics of Int64 and
//! Float64 columns are not, and it panics on a map without key and value
//! types.

use std::ops::Range;

/// Nesting deeper than this is not a Parquet footer.
const MAX_DEPTH: u32 = 64;

/// Bytes that are not a struct in the compact protocol, or not all of one.
#[derive(Debug, thiserror::Error)]
#[error("malformed Thrift compact protocol at byte {at}")]
pub(super) struct Malformed {
    at: usize,
}

/// Compact protocol types, as the low nibble of a field header says.
const BOOL_TRUE: u8 = 1;
const BOOL_FALSE: u8 = 2;
const BYTE: u8 = 3;
const I16: u8 = 4;
const I32: u8 = 5;
const I64: u8 = 6;
const DOUBLE: u8 = 7;
const BINARY: u8 = 8;
const LIST: u8 = 9;
const SET: u8 = 10;
const MAP: u8 = 11;
pub(super) const STRUCT: u8 = 12;

/// Where the value of one field of a struct lies.
#[derive(Debug, PartialEq)]
pub(super) struct Field {
    pub(super) id: i16,
    pub(super) value: Range<usize>,
}

/// The fields of the struct that `bytes` begin with, in order, and where
/// the struct ends (after its stop byte).
pub(super) fn struct_fields(bytes: &[u8]) -> Result<(Vec<Field>, usize), Malformed> {
    let mut reader = Reader { bytes, at: 0 };
    let mut fields = Vec::new();
    let mut last_id = 0i16;
    while let Some((id, kind)) = reader.field_header(&mut last_id)? {
        let start = reader.at;
        reader.step_over_field_value(kind, 0)?;
        fields.push(Field {
            id,
            value: start..reader.at,
        });
    }
    Ok((fields, reader.at))
}

/// An i64 as the compact protocol writes it: zigzag, then a varint.
pub(super) fn write_i64(value: i64, out: &mut Vec<u8>) {
    let mut zigzag = ((value << 1) ^ (value >> 63)) as u64;
    while zigzag >= 0x80 {
        out.push((zigzag as u8) | 0x80);
        zigzag >>= 7;
    }
    out.push(zigzag as u8);
}

/// The header of a list of `len` elements of type `kind`.
pub(super) fn write_list_header(len: usize, kind: u8, out: &mut Vec<u8>) {
    if len < 15 {
        out.push(((len as u8) << 4) | kind);
    } else {
        out.push(0xF0 | kind);
        let mut len = len as u64;
        while len >= 0x80 {
            out.push((len as u8) | 0x80);
            len >>= 7;
        }
        out.push(len as u8);
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn malformed(&self) -> Malformed {
        Malformed { at: self.at }
    }

    fn byte(&mut self) -> Result<u8, Malformed> {
        let byte = *self.bytes.get(self.at).ok_or_else(|| self.malformed())?;
        self.at += 1;
        Ok(byte)
    }

    fn step_over_bytes(&mut self, len: u64) -> Result<(), Malformed> {
        let end = usize::try_from(len)
            .ok()
            .and_then(|len| self.at.checked_add(len))
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| self.malformed())?;
        self.at = end;
        Ok(())
    }

    fn varint(&mut self) -> Result<u64, Malformed> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.byte()?;
            value |= u64::from(byte & 0x7F) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(self.malformed())
    }

    /// The next field's id and type, or `None` at the struct's stop byte.
    fn field_header(&mut self, last_id: &mut i16) -> Result<Option<(i16, u8)>, Malformed> {
        let header = self.byte()?;
        if header == 0 {
            return Ok(None);
        }
        let delta = header >> 4;
        let id = if delta == 0 {
            let zigzag = self.varint()?;
            i16::try_from((zigzag >> 1) as i64 ^ -((zigzag & 1) as i64))
                .map_err(|_| self.malformed())?
        } else {
            last_id.wrapping_add(i16::from(delta))
        };
        *last_id = id;
        Ok(Some((id, header & 0x0F)))
    }

    /// Moves past a field's value (a boolean field's is in its header).
    fn step_over_field_value(&mut self, kind: u8, depth: u32) -> Result<(), Malformed> {
        match kind {
            BOOL_TRUE | BOOL_FALSE => Ok(()),
            _ => self.step_over_value(kind, depth),
        }
    }

    /// Moves past a value, reading its length, elements or fields as it
    /// goes; inside a list, set or map a boolean takes a byte.
    fn step_over_value(&mut self, kind: u8, depth: u32) -> Result<(), Malformed> {
        if depth > MAX_DEPTH {
            return Err(self.malformed());
        }
        match kind {
            BOOL_TRUE | BOOL_FALSE | BYTE => self.step_over_bytes(1),
            I16 | I32 | I64 => self.varint().map(drop),
            DOUBLE => self.step_over_bytes(8),
            BINARY => {
                let len = self.varint()?;
                self.step_over_bytes(len)
            }
            LIST | SET => {
                let header = self.byte()?;
                let len = match header >> 4 {
                    15 => self.varint()?,
                    short => u64::from(short),
                };
                for _ in 0..len {
                    self.step_over_value(header & 0x0F, depth + 1)?;
                }
                Ok(())
            }
            MAP => {
                let len = self.varint()?;
                if len > 0 {
                    let kinds = self.byte()?;
                    for _ in 0..len {
                        self.step_over_value(kinds >> 4, depth + 1)?;
                        self.step_over_value(kinds & 0x0F, depth + 1)?;
                    }
                }
                Ok(())
            }
            STRUCT => {
                let mut last_id = 0i16;
                while let Some((_, kind)) = self.field_header(&mut last_id)? {
                    self.step_over_field_value(kind, depth + 1)?;
                }
                Ok(())
            }
            _ => Err(self.malformed()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A struct of every kind of field, nested, written by hand in the
    /// compact protocol: each field's value is found where it is.
    #[test]
    fn finds_each_field_of_a_struct() {
        let bytes = [
            0x15, 0x04, // field 1, i32 2
            0x11, // field 2, true
            0x18, 0x02, b'h', b'i', // field 3, binary "hi"
            0x19, 0x2C, 0x15, 0x02, 0x00, 0x00, // field 4, list of 2 structs
            0x06, 0x28, 0x02, // field 20 (long form), i64 1
            0x1B, 0x01, 0x57, 0x04, // field 21, map {2: 7.0} of i32 to double
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1C, 0x40, // the double
            0x19, 0x21, 0x01, 0x02, // field 22, list of 2 bools
            0x00, // stop
            0xFF, // after the struct
        ];
        let (fields, end) = struct_fields(&bytes).unwrap();
        let ids: Vec<i16> = fields.iter().map(|f| f.id).collect();
        assert_eq!(ids, [1, 2, 3, 4, 20, 21, 22]);
        assert_eq!(fields[0].value, 1..2);
        assert_eq!(fields[1].value, 3..3);
        assert_eq!(&bytes[fields[2].value.clone()], [0x02, b'h', b'i']);
        assert_eq!(fields[3].value, 8..13);
        assert_eq!(&bytes[fields[4].value.clone()], [0x02]);
        assert_eq!(fields[5].value.len(), 11);
        assert_eq!(end, bytes.len() - 1);
    }

    #[test]
    fn cut_bytes_are_malformed() {
        assert!(struct_fields(&[0x18, 0x05, b'a']).is_err());
        assert!(struct_fields(&[0x15, 0x80]).is_err());
        assert!(struct_fields(&[0x1D]).is_err());
    }

    #[test]
    fn writes_numbers_and_list_headers_as_the_protocol_does() {
        let mut out = Vec::new();
        write_i64(0, &mut out);
        write_i64(-1, &mut out);
        write_i64(300, &mut out);
        assert_eq!(out, [0x00, 0x01, 0xD8, 0x04]);
        out.clear();
        write_list_header(3, STRUCT, &mut out);
        write_list_header(300, STRUCT, &mut out);
        assert_eq!(out, [0x3C, 0xFC, 0xAC, 0x02]);
    }
}
