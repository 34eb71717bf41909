//! Continuation tokens: a suspended query, sealed so that a client can hand
//! it back later, to this server or to any other serving the same index with
//! the same key (DESIGN.md, "Preemption").
//!
//! A token carries everything needed to plan the query again and put its
//! pipelined operators back where they stopped: the query text and request,
//! the [`SavedQuery`], the index it ran on and which server holds any
//! materialized state it references. It is authenticated with HMAC-SHA256
//! (truncated to 128 bits) so clients cannot forge positions, and versioned.
//! Text is URL-safe base64; the payload is LZ4-compressed when that helps.

use super::SavedQuery;
use base64::Engine as _;
use hmac::{KeyInit, Mac};
use thiserror::Error;

/// Largest payload a token may decompress to.
const MAX_PAYLOAD: usize = 1 << 20;

/// Compresses a token's payload. LZ4 rather than zstd: a token is sealed
/// at every suspension and opened at every resume, and on a worker whose
/// caches hold the query's data rather than a compressor's tables, zstd took
/// tens of µs per token where LZ4 takes a few; its tokens were
/// 4% smaller (WatDiv C3: 638 against 664 bytes).
fn compress(payload: &[u8]) -> Vec<u8> {
    lz4_flex::block::compress_prepend_size(payload)
}

/// The payload of a compressed token; `None` if it does not decompress or
/// claims to be larger than [`MAX_PAYLOAD`].
fn decompress(frame: &[u8]) -> Option<Vec<u8>> {
    let size = u32::from_le_bytes(frame.get(..4)?.try_into().ok()?) as usize;
    if size > MAX_PAYLOAD {
        return None;
    }
    lz4_flex::block::decompress_size_prepended(frame).ok()
}

const VERSION: u8 = 4;
const TAG_BYTES: usize = 16;
const FLAG_COMPRESSED: u8 = 1;

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// The secret that signs tokens.
#[derive(Clone)]
pub struct TokenKey(Vec<u8>);

impl TokenKey {
    /// A key from secret bytes (at least 16).
    pub fn new(secret: &[u8]) -> Result<TokenKey, TokenError> {
        if secret.len() < 16 {
            return Err(TokenError::WeakKey(secret.len()));
        }
        Ok(TokenKey(secret.to_vec()))
    }

    /// A fresh random key (tokens then only work on this process).
    pub fn random() -> TokenKey {
        let secret: [u8; 32] = rand::random();
        TokenKey(secret.to_vec())
    }

    fn tag(&self, bytes: &[u8]) -> [u8; TAG_BYTES] {
        let mut mac = HmacSha256::new_from_slice(&self.0).expect("HMAC takes keys of any length");
        mac.update(bytes);
        let full = mac.finalize().into_bytes();
        let mut tag = [0u8; TAG_BYTES];
        tag.copy_from_slice(&full[..TAG_BYTES]);
        tag
    }
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum TokenError {
    #[error("the continuation token is malformed: {0}")]
    Malformed(&'static str),
    #[error("the continuation token was not issued by this service (bad signature)")]
    BadSignature,
    #[error("the continuation token has version {0}; this server reads version {VERSION}")]
    Version(u8),
    #[error("a token key needs at least 16 bytes, got {0}")]
    WeakKey(usize),
}

/// A suspended query as a client carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContinuationToken {
    /// The index the query ran on (`IndexMeta::index_id`).
    pub index_id: String,
    /// The server process holding stashed state the query refers to.
    pub stash_owner: u64,
    /// The query's operators, still running, in that server's stash (see
    /// [`SolutionStream::suspend_keeping`](crate::SolutionStream::suspend_keeping));
    /// `saved` holds the same point for any other server.
    pub parked: Option<u64>,
    /// When the token was issued, in milliseconds since the Unix epoch.
    pub issued_at_ms: u64,
    /// When the query's first page was asked for (same unit): its pages
    /// wait for their turns by this age, so a paging client keeps its place
    /// among the long queries.
    pub started_at_ms: u64,
    pub query: String,
    pub base_iri: Option<String>,
    pub default_graphs: Option<Vec<String>>,
    pub named_graphs: Option<Vec<String>>,
    /// The request's `inference` and `sameas` parameters, as given (the
    /// rewritten plan must be the same on every page).
    pub inference: Option<String>,
    pub same_as: Option<String>,
    /// Results already returned (for runtime information).
    pub rows_so_far: u64,
    pub saved: SavedQuery,
}

impl ContinuationToken {
    /// Serializes, compresses when worthwhile, signs and encodes.
    pub fn seal(&self, key: &TokenKey) -> String {
        let mut payload = Vec::new();
        self.write(&mut payload);
        let mut flags = 0;
        if payload.len() > 64 {
            let small = compress(&payload);
            if small.len() < payload.len() {
                payload = small;
                flags = FLAG_COMPRESSED;
            }
        }
        let mut bytes = vec![VERSION, flags];
        bytes.extend_from_slice(&payload);
        let tag = key.tag(&bytes);
        bytes.extend_from_slice(&tag);
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    }

    /// Decodes and checks a token; errors say what is wrong for a 400.
    pub fn open(text: &str, key: &TokenKey) -> Result<ContinuationToken, TokenError> {
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(text.trim())
            .map_err(|_| TokenError::Malformed("not URL-safe base64"))?;
        if bytes.len() < 2 + TAG_BYTES {
            return Err(TokenError::Malformed("too short"));
        }
        let (body, tag) = bytes.split_at(bytes.len() - TAG_BYTES);
        // Constant-time comparison through the MAC's verifier.
        let mut mac = HmacSha256::new_from_slice(&key.0).expect("HMAC takes keys of any length");
        mac.update(body);
        mac.verify_truncated_left(tag)
            .map_err(|_| TokenError::BadSignature)?;
        if body[0] != VERSION {
            return Err(TokenError::Version(body[0]));
        }
        let payload = if body[1] & FLAG_COMPRESSED != 0 {
            decompress(&body[2..]).ok_or(TokenError::Malformed("payload does not decompress"))?
        } else {
            body[2..].to_vec()
        };
        ContinuationToken::read(&mut payload.as_slice())
    }

    fn write(&self, out: &mut Vec<u8>) {
        write_str(out, &self.index_id);
        write_u64(out, self.stash_owner);
        write_u64(out, self.parked.map_or(0, |h| h + 1));
        write_u64(out, self.issued_at_ms);
        write_u64(out, self.started_at_ms);
        write_str(out, &self.query);
        write_opt_str(out, self.base_iri.as_deref());
        write_opt_list(out, self.default_graphs.as_deref());
        write_opt_list(out, self.named_graphs.as_deref());
        write_opt_str(out, self.inference.as_deref());
        write_opt_str(out, self.same_as.as_deref());
        write_u64(out, self.rows_so_far);
        let saved = self.saved.to_bytes();
        write_u64(out, saved.len() as u64);
        out.extend_from_slice(&saved);
    }

    fn read(input: &mut &[u8]) -> Result<ContinuationToken, TokenError> {
        let index_id = read_str(input)?;
        let stash_owner = read_u64(input)?;
        let parked = read_u64(input)?.checked_sub(1);
        let issued_at_ms = read_u64(input)?;
        let started_at_ms = read_u64(input)?;
        let query = read_str(input)?;
        let base_iri = read_opt_str(input)?;
        let default_graphs = read_opt_list(input)?;
        let named_graphs = read_opt_list(input)?;
        let inference = read_opt_str(input)?;
        let same_as = read_opt_str(input)?;
        let rows_so_far = read_u64(input)?;
        let saved = read_bytes(input)?;
        let saved =
            SavedQuery::from_bytes(saved).map_err(|_| TokenError::Malformed("bad query state"))?;
        if !input.is_empty() {
            return Err(TokenError::Malformed("trailing bytes"));
        }
        Ok(ContinuationToken {
            index_id,
            stash_owner,
            parked,
            issued_at_ms,
            started_at_ms,
            query,
            base_iri,
            default_graphs,
            named_graphs,
            inference,
            same_as,
            rows_so_far,
            saved,
        })
    }
}

fn write_u64(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn read_u64(input: &mut &[u8]) -> Result<u64, TokenError> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = input
            .split_first()
            .ok_or(TokenError::Malformed("truncated"))?;
        *input = rest;
        value |= u64::from(b & 0x7F) << shift;
        if b < 0x80 {
            return Ok(value);
        }
    }
    Err(TokenError::Malformed("number too long"))
}

fn write_str(out: &mut Vec<u8>, s: &str) {
    write_u64(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn read_bytes<'a>(input: &mut &'a [u8]) -> Result<&'a [u8], TokenError> {
    let len = read_u64(input)? as usize;
    if len > input.len() {
        return Err(TokenError::Malformed("truncated"));
    }
    let (bytes, rest) = input.split_at(len);
    *input = rest;
    Ok(bytes)
}

fn read_str(input: &mut &[u8]) -> Result<String, TokenError> {
    String::from_utf8(read_bytes(input)?.to_vec()).map_err(|_| TokenError::Malformed("not UTF-8"))
}

fn write_opt_str(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        None => out.push(0),
        Some(s) => {
            out.push(1);
            write_str(out, s);
        }
    }
}

fn read_flag(input: &mut &[u8]) -> Result<bool, TokenError> {
    let (&flag, rest) = input
        .split_first()
        .ok_or(TokenError::Malformed("truncated"))?;
    *input = rest;
    match flag {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(TokenError::Malformed("bad flag")),
    }
}

fn read_opt_str(input: &mut &[u8]) -> Result<Option<String>, TokenError> {
    Ok(if read_flag(input)? {
        Some(read_str(input)?)
    } else {
        None
    })
}

fn write_opt_list(out: &mut Vec<u8>, list: Option<&[String]>) {
    match list {
        None => out.push(0),
        Some(list) => {
            out.push(1);
            write_u64(out, list.len() as u64);
            for s in list {
                write_str(out, s);
            }
        }
    }
}

fn read_opt_list(input: &mut &[u8]) -> Result<Option<Vec<String>>, TokenError> {
    if !read_flag(input)? {
        return Ok(None);
    }
    let n = read_u64(input)?;
    if n > input.len() as u64 {
        return Err(TokenError::Malformed("truncated"));
    }
    (0..n)
        .map(|_| read_str(input))
        .collect::<Result<_, _>>()
        .map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suspend::OperatorState;

    fn token() -> ContinuationToken {
        ContinuationToken {
            index_id: "3f2a9c".to_owned(),
            stash_owner: 77,
            parked: Some(3),
            issued_at_ms: 1_795_000_000_000,
            started_at_ms: 1_794_999_990_000,
            query: "SELECT * WHERE { ?s ?p ?o }".to_owned(),
            base_iri: Some("http://example.org/".to_owned()),
            default_graphs: None,
            named_graphs: Some(vec!["http://example.org/g".to_owned()]),
            inference: Some("rdfs".to_owned()),
            same_as: None,
            rows_so_far: 4096,
            saved: SavedQuery {
                done: false,
                plan: OperatorState::new(vec![1, 2, 3, 4], vec![OperatorState::default()]),
                context: OperatorState::new(vec![9, 9, 9], vec![]),
                skip: 300,
            },
        }
    }

    #[test]
    fn sealed_tokens_open_with_the_same_key_only() {
        let key = TokenKey::new(b"0123456789abcdef0123").unwrap();
        let sealed = token().seal(&key);
        assert!(sealed.len() < 200, "{} bytes", sealed.len());
        assert_eq!(ContinuationToken::open(&sealed, &key).unwrap(), token());
        let other = TokenKey::random();
        assert_eq!(
            ContinuationToken::open(&sealed, &other),
            Err(TokenError::BadSignature)
        );
    }

    #[test]
    fn tampered_tokens_are_refused() {
        let key = TokenKey::random();
        let sealed = token().seal(&key);
        let mut bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(&sealed)
            .unwrap();
        for i in [0, 3, bytes.len() / 2, bytes.len() - 1] {
            bytes[i] ^= 0x20;
            let text = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&bytes);
            assert_eq!(
                ContinuationToken::open(&text, &key),
                Err(TokenError::BadSignature),
                "byte {i} changed"
            );
            bytes[i] ^= 0x20;
        }
        assert!(matches!(
            ContinuationToken::open("not a token!", &key),
            Err(TokenError::Malformed(_))
        ));
        assert!(matches!(
            ContinuationToken::open("", &key),
            Err(TokenError::Malformed(_))
        ));
    }

    #[test]
    fn short_keys_are_refused() {
        assert_eq!(TokenKey::new(b"short").err(), Some(TokenError::WeakKey(5)));
    }
}
