//! Escaping of strings into output buffers. Each function copies runs of
//! bytes that need no escaping in one `extend_from_slice`, because nearly all
//! strings in real data have nothing to escape and per-byte pushes would
//! dominate export time.

/// Inside a double-quoted N-Triples / Turtle string: `"`, `\`, CR and LF
/// must be escaped (the other controls are legal but escaped for readability
/// of tabs in TSV by [`tsv_string`]).
pub fn nt_string(out: &mut Vec<u8>, s: &str) {
    if !may_need_escaping(s.as_bytes()) {
        out.extend_from_slice(s.as_bytes());
        return;
    }
    escape_with(out, s.as_bytes(), |b| match b {
        b'"' => Some(b"\\\""),
        b'\\' => Some(b"\\\\"),
        b'\n' => Some(b"\\n"),
        b'\r' => Some(b"\\r"),
        _ => None,
    })
}

/// Like [`nt_string`], and tabs too: a raw tab would split a TSV field.
pub fn tsv_string(out: &mut Vec<u8>, s: &str) {
    if !may_need_escaping(s.as_bytes()) {
        out.extend_from_slice(s.as_bytes());
        return;
    }
    escape_with(out, s.as_bytes(), |b| match b {
        b'"' => Some(b"\\\""),
        b'\\' => Some(b"\\\\"),
        b'\n' => Some(b"\\n"),
        b'\r' => Some(b"\\r"),
        b'\t' => Some(b"\\t"),
        _ => None,
    })
}

/// Whether `bytes` holds a control character, `"` or a backslash: every byte that
/// N-Triples, TSV or JSON strings escape is one of those. Tested a chunk at a
/// time without branching per byte, which the compiler turns into vector
/// instructions: most strings have nothing to escape and are copied whole.
#[inline]
fn may_need_escaping(bytes: &[u8]) -> bool {
    const CHUNK: usize = 32;
    let special = |b: u8| (b < 0x20) | (b == b'"') | (b == b'\\');
    let mut chunks = bytes.chunks_exact(CHUNK);
    for chunk in &mut chunks {
        if chunk.iter().fold(false, |found, &b| found | special(b)) {
            return true;
        }
    }
    chunks.remainder().iter().any(|&b| special(b))
}

/// Inside a JSON string.
pub fn json_string(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    if !may_need_escaping(bytes) {
        out.extend_from_slice(bytes);
        return;
    }
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b >= 0x20 && b != b'"' && b != b'\\' {
            continue;
        }
        out.extend_from_slice(&bytes[start..i]);
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[(b >> 4) as usize]);
                out.push(HEX[(b & 15) as usize]);
            }
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
}

/// XML text and attribute values (quotes escaped so one function serves both).
/// Controls other than tab/CR/LF cannot appear in XML 1.0 at all, not even as
/// references, so they become U+FFFD rather than a document no parser reads.
pub fn xml_text(out: &mut Vec<u8>, s: &str) {
    escape_with(out, s.as_bytes(), |b| match b {
        b'&' => Some(b"&amp;"),
        b'<' => Some(b"&lt;"),
        b'>' => Some(b"&gt;"),
        b'"' => Some(b"&quot;"),
        b'\r' => Some(b"&#13;"),
        0..=8 | 11 | 12 | 14..=31 => Some("\u{FFFD}".as_bytes()),
        _ => None,
    })
}

/// A CSV field (RFC 4180): quoted only when it holds a quote, comma or line break.
pub fn csv_field(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    if !bytes
        .iter()
        .any(|&b| matches!(b, b'"' | b',' | b'\n' | b'\r'))
    {
        out.extend_from_slice(bytes);
        return;
    }
    out.push(b'"');
    escape_with(out, bytes, |b| (b == b'"').then_some(b"\"\"".as_slice()));
    out.push(b'"');
}

#[inline]
fn escape_with(out: &mut Vec<u8>, bytes: &[u8], replace: impl Fn(u8) -> Option<&'static [u8]>) {
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if let Some(r) = replace(b) {
            out.extend_from_slice(&bytes[start..i]);
            out.extend_from_slice(r);
            start = i + 1;
        }
    }
    out.extend_from_slice(&bytes[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(f: fn(&mut Vec<u8>, &str), s: &str) -> String {
        let mut out = Vec::new();
        f(&mut out, s);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn long_strings_are_escaped_wherever_the_special_byte_is() {
        for at in [0, 31, 32, 63, 64, 70] {
            for (special, escaped) in [("\t", "\\t"), ("\"", "\\\""), ("\\", "\\\\")] {
                let mut s = "x".repeat(71);
                s.replace_range(at..at + 1, special);
                let expected = format!("{}{escaped}{}", &s[..at], &s[at + 1..]);
                assert_eq!(run(tsv_string, &s), expected, "{special:?} at {at}");
            }
        }
        let plain = "y".repeat(100);
        assert_eq!(run(tsv_string, &plain), plain);
        assert_eq!(run(json_string, &plain), plain);
    }

    #[test]
    fn escapes() {
        assert_eq!(run(nt_string, "a\"b\\c\nd\te"), "a\\\"b\\\\c\\nd\te");
        assert_eq!(run(tsv_string, "a\tb"), "a\\tb");
        assert_eq!(run(json_string, "é\"\u{1}"), "é\\\"\\u0001");
        assert_eq!(
            run(xml_text, "<a&\"b\">\u{2}"),
            "&lt;a&amp;&quot;b&quot;&gt;\u{FFFD}"
        );
        assert_eq!(run(csv_field, "plain"), "plain");
        assert_eq!(run(csv_field, "a,\"b\""), "\"a,\"\"b\"\"\"");
    }
}
