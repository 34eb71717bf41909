//! `multipart/form-data` bodies (RFC 7578), which the Graph Store Protocol
//! allows for POST: each part an RDF document with its own Content-Type.

use crate::error::RequestError;

/// One part: its Content-Type (if any) and its bytes.
pub struct Part<'a> {
    pub content_type: Option<String>,
    pub body: &'a [u8],
}

/// The `boundary` parameter of a multipart Content-Type.
pub fn boundary(content_type: &str) -> Option<String> {
    // The parameters follow the media type.
    let (_, parameters) = content_type.split_once(';')?;
    parameters.split(';').find_map(|p| {
        let (key, value) = p.trim().split_once('=')?;
        key.trim()
            .eq_ignore_ascii_case("boundary")
            .then(|| value.trim().trim_matches('"').to_owned())
    })
}

/// Splits a body into its parts.
pub fn parts<'a>(body: &'a [u8], boundary: &str) -> Result<Vec<Part<'a>>, RequestError> {
    let bad = |why: &str| RequestError::BadRequest(format!("malformed multipart body: {why}"));
    let delimiter = format!("--{boundary}");
    let delimiter = delimiter.as_bytes();
    let mut at = find(body, delimiter, 0).ok_or_else(|| bad("no boundary"))? + delimiter.len();
    let mut out = Vec::new();
    loop {
        if body[at..].starts_with(b"--") {
            return Ok(out);
        }
        at += line_end(&body[at..]).ok_or_else(|| bad("no line after a boundary"))?;
        let head_end = find(body, b"\r\n\r\n", at)
            .map(|i| (i, 4))
            .or_else(|| find(body, b"\n\n", at).map(|i| (i, 2)))
            .ok_or_else(|| bad("a part without headers' end"))?;
        let content_type = std::str::from_utf8(&body[at..head_end.0])
            .map_err(|_| bad("part headers are not text"))?
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.trim()
                    .eq_ignore_ascii_case("content-type")
                    .then(|| value.trim().to_owned())
            });
        let start = head_end.0 + head_end.1;
        let next = find(body, delimiter, start).ok_or_else(|| bad("unterminated part"))?;
        // The line break before the delimiter belongs to it.
        let mut end = next;
        if body[..end].ends_with(b"\r\n") {
            end -= 2;
        } else if body[..end].ends_with(b"\n") {
            end -= 1;
        }
        out.push(Part {
            content_type,
            body: &body[start..end],
        });
        at = next + delimiter.len();
    }
}

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    memchr::memmem::find(&haystack[from..], needle).map(|i| i + from)
}

/// Bytes up to and including the next line break.
fn line_end(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', bytes).map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_parts_with_their_types() {
        let ct = "multipart/form-data; boundary=\"xyz\"";
        let b = boundary(ct).unwrap();
        let body = b"--xyz\r\nContent-Type: text/turtle\r\n\r\n<a> <b> <c> .\r\n--xyz\r\n\
Content-Disposition: form-data; name=\"f\"\r\nContent-Type: application/n-triples\r\n\r\n<d> <e> <f> .\n\r\n--xyz--\r\n";
        let parts = parts(body, &b).unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].content_type.as_deref(), Some("text/turtle"));
        assert_eq!(parts[0].body, b"<a> <b> <c> .");
        assert_eq!(parts[1].body, b"<d> <e> <f> .\n");
        assert!(super::parts(b"--xyz\r\nContent-Type: a\r\n\r\nno end", "xyz").is_err());
    }
}
