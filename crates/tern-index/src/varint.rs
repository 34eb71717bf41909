//! LEB128 variable-length integers, the byte format of deltas and lengths.

#[inline]
pub fn write(mut value: u64, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Reads one varint at `*pos`, advancing it. `None` on truncated input.
#[inline]
pub fn read(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    let mut shift = 0;
    loop {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        value |= u64::from(b & 0x7F) << shift;
        if b < 0x80 {
            return Some(value);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

/// [`read`] for long runs of varints: a value of one byte (most deltas
/// of sorted columns) takes one comparison, and where ten bytes remain a
/// longer one is read without a bounds check per byte.
#[inline(always)]
pub fn read_fast(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let at = *pos;
    if let Some(&b) = bytes.get(at) {
        if b < 0x80 {
            *pos = at + 1;
            return Some(u64::from(b));
        }
    }
    let Some(window) = bytes.get(at..at + 10) else {
        return read(bytes, pos);
    };
    let mut value = 0u64;
    for (i, &b) in window.iter().enumerate() {
        value |= u64::from(b & 0x7F) << (7 * i);
        if b < 0x80 {
            *pos = at + i + 1;
            return Some(value);
        }
    }
    None
}

#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trips() {
        let mut buf = Vec::new();
        let values = [0, 1, 127, 128, 300, u64::MAX];
        for v in values {
            super::write(v, &mut buf);
        }
        let mut pos = 0;
        for v in values {
            assert_eq!(super::read(&buf, &mut pos), Some(v));
        }
        assert_eq!(super::read(&buf, &mut pos), None);
        let mut pos = 0;
        for v in values {
            assert_eq!(super::read_fast(&buf, &mut pos), Some(v));
        }
        assert_eq!(super::read_fast(&buf, &mut pos), None);
        // A varint of more than ten bytes is no u64.
        let mut pos = 0;
        assert_eq!(super::read_fast(&[0xFF; 12], &mut pos), None);
        for v in [0i64, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(super::unzigzag(super::zigzag(v)), v);
        }
    }
}
