//! LOAD over http(s): the document an IRI names, fetched only where the
//! operator allows, never from the network the server sits in.
//!
//! Every address a host name resolves to (also after each redirect: the
//! client asks this module's resolver for every connection) must be a
//! public one; loopback, private, link-local, shared, multicast and
//! reserved ranges are refused unless the operator named the host
//! (`--load-http-allow-host`, for a mirror on the intranet). The body is
//! read up to a size limit and within the update's time limit.

use crate::EngineError;
use oxrdf::NamedNode;
use oxrdfio::RdfFormat;
use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::time::Duration;

/// What http(s) LOAD may fetch.
#[derive(Debug, Clone)]
pub struct HttpLoad {
    /// Host names (or literal addresses) that may be fetched although they
    /// are, or resolve to, non-public addresses.
    pub allowed_hosts: Vec<String>,
    /// Largest document, in bytes.
    pub max_bytes: u64,
    /// Longest fetch when the update has no time limit of its own.
    pub timeout: Duration,
}

/// The media types LOAD asks for, best first.
const ACCEPT: &str = "application/n-triples, text/turtle;q=0.9, application/n-quads;q=0.9, \
                      application/trig;q=0.9, application/rdf+xml;q=0.8, \
                      application/ld+json;q=0.7, */*;q=0.1";

/// A fetched document: its bytes and the RDF syntax they are in.
pub struct Fetched {
    pub body: Vec<u8>,
    pub format: RdfFormat,
}

/// Fetches `source` (an http or https IRI) under `policy`.
pub fn fetch(
    source: &NamedNode,
    policy: &HttpLoad,
    timeout: Option<Duration>,
) -> Result<Fetched, EngineError> {
    let iri = source.as_str();
    let allowed = policy.allowed_hosts.clone();
    let agent = ureq::AgentBuilder::new()
        .timeout(timeout.unwrap_or(policy.timeout).min(policy.timeout))
        .redirects(5)
        .user_agent(concat!("tern/", env!("CARGO_PKG_VERSION")))
        .resolver(move |netloc: &str| resolve_public(netloc, &allowed))
        .build();
    let response = match agent.get(iri).set("Accept", ACCEPT).call() {
        Ok(response) => response,
        Err(ureq::Error::Status(code, response)) => {
            return Err(EngineError::Update(format!(
                "LOAD <{iri}>: the server answered {code} {}",
                response.status_text()
            )))
        }
        Err(ureq::Error::Transport(e)) => return Err(transport_error(iri, &e)),
    };
    let media_type = response.content_type().to_owned();
    let format = RdfFormat::from_media_type(&media_type)
        .or_else(|| format_from_path(response.get_url()))
        .ok_or_else(|| {
            EngineError::Update(format!(
                "LOAD <{iri}>: the document is {media_type}, not an RDF syntax Tern reads"
            ))
        })?;
    let mut body = Vec::new();
    response
        .into_reader()
        .take(policy.max_bytes + 1)
        .read_to_end(&mut body)
        .map_err(|e| EngineError::Update(format!("LOAD <{iri}>: reading the document: {e}")))?;
    if body.len() as u64 > policy.max_bytes {
        return Err(EngineError::Update(format!(
            "LOAD <{iri}>: the document is larger than the server's limit of {} bytes \
             (--load-max-bytes)",
            policy.max_bytes
        )));
    }
    Ok(Fetched { body, format })
}

/// A refused address comes back from the resolver as an I/O error of
/// kind `PermissionDenied`; that one is the operator's policy (403), any
/// other failure the network's.
fn transport_error(iri: &str, error: &ureq::Transport) -> EngineError {
    let refused = std::error::Error::source(error)
        .and_then(|e| e.downcast_ref::<std::io::Error>())
        .filter(|e| e.kind() == std::io::ErrorKind::PermissionDenied);
    match refused {
        Some(e) => EngineError::Forbidden(format!("LOAD <{iri}>: {e}")),
        None => EngineError::Update(format!("LOAD <{iri}>: {error}")),
    }
}

/// The syntax a URL's file extension names (for servers that send a
/// generic media type).
fn format_from_path(url: &str) -> Option<RdfFormat> {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let name = path.rsplit('/').next()?;
    RdfFormat::from_extension(name.rsplit_once('.')?.1)
}

/// Resolves `netloc` (`host:port`), refusing hosts that are or resolve to
/// non-public addresses unless the operator allowed them by name.
fn resolve_public(netloc: &str, allowed_hosts: &[String]) -> std::io::Result<Vec<SocketAddr>> {
    let host = host_of(netloc);
    let addresses: Vec<SocketAddr> = netloc.to_socket_addrs()?.collect();
    if allowed_hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
        return Ok(addresses);
    }
    if let Some(private) = addresses.iter().find(|a| !is_public(a.ip())) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "{host} is, or resolves to, the non-public address {} (loopback, private, \
                 link-local and reserved addresses are never fetched; the operator can allow a \
                 host by name with --load-http-allow-host)",
                private.ip()
            ),
        ));
    }
    Ok(addresses)
}

/// The host of `host:port`, without the brackets of an IPv6 literal.
fn host_of(netloc: &str) -> &str {
    let host = match netloc.rsplit_once(':') {
        Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) => host,
        _ => netloc,
    };
    host.trim_start_matches('[').trim_end_matches(']')
}

/// Whether an address is reachable on the public internet (and so not a
/// way into the server's own network).
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_multicast()
        || a == 0 // "this network"
        || (a == 100 && (64..128).contains(&b)) // shared address space (carrier NAT)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240) // reserved
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let segments = ip.segments();
    // NAT64 (64:ff9b::/96) reaches the IPv4 address it embeds.
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let [a, b] = segments[6].to_be_bytes();
        let [c, d] = segments[7].to_be_bytes();
        return is_public_v4(Ipv4Addr::new(a, b, c, d));
    }
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (segments[0] & 0xfe00) == 0xfc00 // unique local
        || (segments[0] & 0xffc0) == 0xfe80 // link-local
        || (segments[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
        || segments[0] == 0x2002 // 6to4: reaches an embedded IPv4 address
        || (segments[0] == 0x2001 && segments[1] == 0x0db8) // documentation
        || segments[..5] == [0, 0, 0, 0, 0]) // IPv4-compatible (deprecated)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses_pass() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "198.18.0.1",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "2002:7f00:1::",
            "ff02::1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in [
            "1.1.1.1",
            "8.8.8.8",
            "172.32.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
        ] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn loopback_names_are_refused_unless_allowed() {
        let err = resolve_public("localhost:80", &[]).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied);
        assert!(err.to_string().contains("--load-http-allow-host"), "{err}");
        let err = resolve_public("[::1]:8080", &[]).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied);
        assert!(resolve_public("localhost:80", &["LOCALHOST".into()]).is_ok());
        assert!(resolve_public("127.0.0.1:80", &["127.0.0.1".into()]).is_ok());
        assert_eq!(host_of("[::1]:8080"), "::1");
        assert_eq!(host_of("example.org:443"), "example.org");
    }

    #[test]
    fn the_format_follows_the_path_when_the_media_type_is_generic() {
        assert_eq!(
            format_from_path("http://e.org/data/x.ttl?version=2"),
            Some(RdfFormat::Turtle)
        );
        assert_eq!(
            format_from_path("http://e.org/data/x.nq"),
            Some(RdfFormat::NQuads)
        );
        assert_eq!(format_from_path("http://e.org/data/"), None);
    }
}
