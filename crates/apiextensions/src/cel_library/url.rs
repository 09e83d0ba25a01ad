//! The `url` library (apiserver `pkg/cel/library/urls.go`): `url()`, `isURL()`, `getScheme()`,
//! `getHost()`, `getHostname()`, `getPort()`, `getEscapedPath()` and `getQuery()`.
//!
//! # Why not the `url` crate
//! v1.36 parses with Go's `url.ParseRequestURI`, which differs from the WHATWG parser of the
//! `url` crate: `/just/a/path` and `mailto:a@b` are URLs, a host is kept as written (no
//! lower-casing, no punycode, no default port dropped), a path is not normalised (`/a/../b`
//! stays), and the messages are Go's.
//! Rules compare these parts as strings, so this module reads URLs the way Go does: the steps
//! of Go's `parse` with `viaRequest`, its `parseHost` and `unescape` checks and its messages.

use std::collections::HashMap;
use std::sync::Arc;

use cel::extractors::This;
use cel::objects::{Key, Map, Opaque};
use cel::{Context, Value};

use super::opaque::{error, expect, wrap};

/// Reads one part of a URL.
type Getter = fn(&Url) -> String;

/// A parsed URL: the parts the library's getters read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Url {
    scheme: String,
    /// The authority's host and port, unescaped (`example.com:80`, `[::1]:80`).
    host: String,
    /// The path as written, when it is validly escaped; else the decoded path.
    raw_path: String,
    /// Whether `raw_path` is the decoded path (so it must be escaped when shown).
    path_decoded: bool,
    raw_query: String,
}

impl Opaque for Url {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.URL"
    }
}

/// Registers the library's functions in `ctx`.
pub(crate) fn register(ctx: &mut Context<'static, 'static>) {
    let _ = ctx.add_function("url", |s: Arc<String>| {
        parse_request_uri(&s).map(wrap).map_err(|e| {
            error(
                "url",
                format!("URL parse error during conversion from string: {e}"),
            )
        })
    });
    let _ = ctx.add_function("isURL", |s: Arc<String>| parse_request_uri(&s).is_ok());
    let getters: [(&str, Getter); 5] = [
        ("getScheme", |u| u.scheme.clone()),
        ("getHost", |u| u.host.clone()),
        ("getHostname", |u| split_host_port(&u.host).0.to_string()),
        ("getPort", |u| split_host_port(&u.host).1.to_string()),
        ("getEscapedPath", escaped_path),
    ];
    for (name, getter) in getters {
        let _ = ctx.add_function(name, move |This(v): This<Value>| {
            expect::<Url>(name, &v).map(|u| Value::String(Arc::new(getter(u))))
        });
    }
    let _ = ctx.add_function("getQuery", |This(v): This<Value>| {
        expect::<Url>("getQuery", &v).map(|u| query(&u.raw_query))
    });
}

/// Go's `url.ParseRequestURI`, with its messages (`parse "x": invalid URI for request`).
pub(crate) fn parse_request_uri(raw: &str) -> Result<Url, String> {
    parse(raw).map_err(|e| format!("parse {raw:?}: {e}"))
}

fn parse(raw: &str) -> Result<Url, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    if raw.is_empty() {
        return Err("empty url".into());
    }
    let mut url = Url {
        scheme: String::new(),
        host: String::new(),
        raw_path: String::new(),
        path_decoded: false,
        raw_query: String::new(),
    };
    if raw == "*" {
        url.raw_path = "*".into();
        return Ok(url);
    }
    let (scheme, rest) = split_scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    let mut rest = rest;
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        rest = &rest[..rest.len() - 1];
    } else if let Some((before, after)) = rest.split_once('?') {
        (rest, url.raw_query) = (before, after.to_string());
    }
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            return Ok(url); // an opaque URL (`mailto:a@b`): no host, no path
        }
        return Err("invalid URI for request".into());
    }
    if !url.scheme.is_empty() && rest.starts_with("//") {
        let authority = &rest[2..];
        let (authority, path) = authority.split_at(authority.find('/').unwrap_or(authority.len()));
        url.host = parse_authority(authority)?;
        rest = path;
    }
    let path = unescape(rest, Mode::Path)?;
    url.path_decoded = !valid_encoded_path(rest);
    url.raw_path = if url.path_decoded {
        path
    } else {
        rest.to_string()
    };
    Ok(url)
}

/// Go's `getScheme`.
fn split_scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err("missing protocol scheme".into()),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// Go's `parseAuthority`: the host (the user info is checked, then dropped).
fn parse_authority(authority: &str) -> Result<String, String> {
    let Some(at) = authority.rfind('@') else {
        return parse_host(authority);
    };
    let host = parse_host(&authority[at + 1..])?;
    let userinfo = &authority[..at];
    let valid = userinfo
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || b"-._:~!$&'()*+,;=%@".contains(&c));
    if !valid {
        return Err("net/url: invalid userinfo".into());
    }
    unescape(userinfo, Mode::UserInfo)?;
    Ok(host)
}

/// Go's `parseHost`.
fn parse_host(host: &str) -> Result<String, String> {
    let port_at = if host.starts_with('[') {
        Some(host.rfind(']').ok_or("missing ']' in host")? + 1)
    } else {
        host.rfind(':')
    };
    if let Some(at) = port_at {
        let colon_port = &host[at..];
        if !valid_optional_port(colon_port) {
            return Err(format!("invalid port {colon_port:?} after host"));
        }
    }
    if let (true, Some(zone)) = (host.starts_with('['), host.find("%25")) {
        let end = host.rfind(']').unwrap_or(host.len());
        let mut out = unescape(&host[..zone], Mode::Host)?;
        out.push_str(&unescape(&host[zone..end], Mode::Zone)?);
        out.push_str(&unescape(&host[end..], Mode::Host)?);
        return Ok(out);
    }
    unescape(host, Mode::Host)
}

fn valid_optional_port(colon_port: &str) -> bool {
    colon_port.is_empty()
        || colon_port
            .strip_prefix(':')
            .is_some_and(|port| port.bytes().all(|b| b.is_ascii_digit()))
}

/// Go's `splitHostPort`: host (without brackets) and port.
fn split_host_port(host_port: &str) -> (&str, &str) {
    let (mut host, mut port) = (host_port, "");
    if let Some(colon) = host_port.rfind(':')
        && valid_optional_port(&host_port[colon..])
    {
        (host, port) = (&host_port[..colon], &host_port[colon + 1..]);
    }
    if host.len() >= 2 && host.starts_with('[') && host.ends_with(']') {
        host = &host[1..host.len() - 1];
    }
    (host, port)
}

/// Go's `URL.EscapedPath`.
fn escaped_path(url: &Url) -> String {
    if !url.path_decoded {
        return url.raw_path.clone();
    }
    let mut out = String::new();
    for b in url.raw_path.bytes() {
        if path_byte_needs_escape(b) {
            out.push_str(&format!("%{b:02X}"));
        } else {
            out.push(char::from(b));
        }
    }
    out
}

/// Go's `shouldEscape(c, encodePath)`.
fn path_byte_needs_escape(b: u8) -> bool {
    !(b.is_ascii_alphanumeric() || b"-_.~$&+,/:;=@".contains(&b))
}

/// Go's `validEncoded(s, encodePath)`.
fn valid_encoded_path(s: &str) -> bool {
    s.bytes()
        .all(|b| b"!$&'()*+,;=:@[]%".contains(&b) || !path_byte_needs_escape(b))
}

/// Go's `URL.Query`: the query's keys and values (malformed pairs skipped), as a CEL map of
/// lists of strings.
fn query(raw: &str) -> Value {
    let mut values: HashMap<Key, Vec<Value>> = HashMap::new();
    for pair in raw.split('&') {
        if pair.is_empty() || pair.contains(';') {
            continue;
        }
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let (Ok(key), Ok(value)) = (unescape(key, Mode::Query), unescape(value, Mode::Query))
        else {
            continue;
        };
        values
            .entry(Key::String(Arc::new(key)))
            .or_default()
            .push(Value::String(Arc::new(value)));
    }
    let map = values
        .into_iter()
        .map(|(k, v)| (k, Value::List(Arc::new(v))))
        .collect();
    Value::Map(Map { map: Arc::new(map) })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    Host,
    Zone,
    UserInfo,
    Query,
}

/// Go's `unescape`: `%XX` decoded (`+` as space in a query), with Go's checks for hosts.
fn unescape(s: &str, mode: Mode) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = |j: usize| bytes.get(j).and_then(|&b| char::from(b).to_digit(16));
                let (Some(hi), Some(lo)) = (hex(i + 1), hex(i + 2)) else {
                    let end = (i + 3).min(bytes.len());
                    return Err(escape_error(&bytes[i..end]));
                };
                if mode == Mode::Host && hi < 8 && &bytes[i..i + 3] != b"%25" {
                    return Err(escape_error(&bytes[i..i + 3]));
                }
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            b'+' if mode == Mode::Query => {
                out.push(b' ');
                i += 1;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && host_byte_needs_escape(c)
                {
                    return Err(format!(
                        "invalid character {:?} in host name",
                        char::from(c).to_string()
                    ));
                }
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

fn escape_error(bytes: &[u8]) -> String {
    format!("invalid URL escape {:?}", String::from_utf8_lossy(bytes))
}

/// Go's `shouldEscape(c, encodeHost)`.
fn host_byte_needs_escape(c: u8) -> bool {
    !(c.is_ascii_alphanumeric() || b"!$&'()*+,;=:[]<>\"-_.~".contains(&c))
}

#[cfg(test)]
#[path = "url_tests.rs"]
mod tests;
