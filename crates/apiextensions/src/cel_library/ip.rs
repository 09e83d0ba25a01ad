//! The `ip` and `cidr` libraries (apiserver `pkg/cel/library/ip.go` and `cidr.go`): `ip()`,
//! `isIP()`, `ip.isCanonical()`, `family()`, the `is*` predicates of Go's `netip.Addr`,
//! `cidr()`, `isCIDR()`, `containsIP()`, `containsCIDR()`, `ip()` of a CIDR, `masked()`,
//! `prefixLength()` and `string()` of both.
//!
//! # Why a parser of our own
//! v1.36 parses with Go's `netip`, which differs from Rust's `IpAddr` on what it refuses and how:
//! netip reads zones (`fe80::1%eth0`), which the library then refuses with its own message, as
//! it refuses IPv4-mapped IPv6 addresses (`::ffff:1.2.3.4`); and rules show netip's messages
//! (`ParseAddr("1.2.3"): IPv4 address too short`). So the readers here follow netip's
//! `parseIPv4` and `parseIPv6` step by step, messages included; std only prints addresses
//! (its IPv6 form is RFC 5952's, as netip's).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use cel::extractors::This;
use cel::objects::Opaque;
use cel::{Context, ExecutionError, Value};

use super::opaque::{self, error, expect, wrap};

/// A test of an address.
type Predicate = fn(IpAddr) -> bool;

/// A CEL `net.IP`: an address without zone, never IPv4-mapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ip(pub(crate) IpAddr);

impl Opaque for Ip {
    fn runtime_type_name(&self) -> &str {
        "net.IP"
    }
}

/// A CEL `net.CIDR`: an address and a prefix length within its family's bits. The address
/// keeps the bits after the prefix (`string()` shows them; `masked()` clears them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cidr {
    pub(crate) addr: IpAddr,
    pub(crate) bits: u8,
}

impl Opaque for Cidr {
    fn runtime_type_name(&self) -> &str {
        "net.CIDR"
    }
}

/// Registers the functions of both libraries in `ctx`.
pub(crate) fn register(ctx: &mut Context<'static, 'static>) {
    let _ = ctx.add_function("ip", |This(v): This<Value>| match &v {
        Value::String(s) => parse_ip(s).map(|a| wrap(Ip(a))),
        other => Ok(wrap(Ip(expect::<Cidr>("ip", other)?.addr))),
    });
    let _ = ctx.add_function("isIP", |s: std::sync::Arc<String>| parse_ip(&s).is_ok());
    let _ = ctx.add_function("ip.isCanonical", |s: std::sync::Arc<String>| {
        parse_ip(&s).map(|a| a.to_string() == *s)
    });
    let _ = ctx.add_function("family", |This(v): This<Value>| {
        Ok::<_, ExecutionError>(match expect::<Ip>("family", &v)?.0 {
            IpAddr::V4(_) => 4i64,
            IpAddr::V6(_) => 6,
        })
    });
    let predicates: [(&str, Predicate); 5] = [
        ("isUnspecified", |a| a.is_unspecified()),
        ("isLoopback", |a| a.is_loopback()),
        ("isLinkLocalMulticast", is_link_local_multicast),
        ("isLinkLocalUnicast", is_link_local_unicast),
        ("isGlobalUnicast", is_global_unicast),
    ];
    for (name, predicate) in predicates {
        let _ = ctx.add_function(name, move |This(v): This<Value>| {
            expect::<Ip>(name, &v).map(|ip| predicate(ip.0))
        });
    }
    register_cidr(ctx);
}

fn register_cidr(ctx: &mut Context<'static, 'static>) {
    let _ = ctx.add_function("cidr", |s: std::sync::Arc<String>| parse_cidr(&s).map(wrap));
    let _ = ctx.add_function("isCIDR", |s: std::sync::Arc<String>| parse_cidr(&s).is_ok());
    let _ = ctx.add_function("containsIP", |This(c): This<Value>, other: Value| {
        let cidr = expect::<Cidr>("containsIP", &c)?;
        let addr = match &other {
            Value::String(s) => parse_ip(s)?,
            other => expect::<Ip>("containsIP", other)?.0,
        };
        Ok::<_, ExecutionError>(contains(cidr, addr))
    });
    let _ = ctx.add_function("containsCIDR", |This(c): This<Value>, other: Value| {
        let cidr = expect::<Cidr>("containsCIDR", &c)?;
        let inner = match &other {
            Value::String(s) => parse_cidr(s)?,
            other => *expect::<Cidr>("containsCIDR", other)?,
        };
        Ok::<_, ExecutionError>(cidr.bits <= inner.bits && contains(cidr, inner.addr))
    });
    let _ = ctx.add_function("masked", |This(c): This<Value>| {
        let cidr = expect::<Cidr>("masked", &c)?;
        Ok::<_, ExecutionError>(wrap(Cidr {
            addr: mask(cidr.addr, cidr.bits),
            bits: cidr.bits,
        }))
    });
    let _ = ctx.add_function("prefixLength", |This(c): This<Value>| {
        expect::<Cidr>("prefixLength", &c).map(|cidr| i64::from(cidr.bits))
    });
}

/// Declares `string(ip)` and `string(cidr)`.
pub(crate) fn add_string_overloads(env: &mut cel::Env) {
    opaque::add_string_overload(env, "net.IP", |args| {
        opaque::string_of::<Ip>(args, |ip| ip.0.to_string())
    });
    opaque::add_string_overload(env, "net.CIDR", |args| {
        opaque::string_of::<Cidr>(args, |c| format!("{}/{}", c.addr, c.bits))
    });
}

/// The library's `parseIPAddr`: netip's `ParseAddr`, then no zone and no IPv4-mapped address.
pub(crate) fn parse_ip(raw: &str) -> Result<IpAddr, ExecutionError> {
    let (addr, zoned) = parse_addr(raw).map_err(|msg| {
        error(
            "ip",
            format!("IP Address {raw:?} parse error during conversion from string: {msg}"),
        )
    })?;
    if zoned {
        return Err(error(
            "ip",
            format!("IP address {raw:?} with zone value is not allowed"),
        ));
    }
    if is_4in6(addr) {
        return Err(error(
            "ip",
            format!("IPv4-mapped IPv6 address {raw:?} is not allowed"),
        ));
    }
    Ok(addr)
}

/// The library's `parseCIDR`: netip's `ParsePrefix`, then no IPv4-mapped address. v1.36 puts
/// its prefix on the message twice (once in `parseCIDR`, once in `stringToCIDR`); so does this.
pub(crate) fn parse_cidr(raw: &str) -> Result<Cidr, ExecutionError> {
    const PREFIX: &str = "network address parse error during conversion from string: ";
    let cidr = parse_prefix(raw).map_err(|msg| {
        let text = format!("netip.ParsePrefix({raw:?}): {msg}");
        error("cidr", format!("{PREFIX}{PREFIX}{text}"))
    })?;
    if is_4in6(cidr.addr) {
        return Err(error(
            "cidr",
            format!("{PREFIX}IPv4-mapped IPv6 address {raw:?} is not allowed"),
        ));
    }
    Ok(cidr)
}

/// netip's `ParsePrefix`, with its message (without the `netip.ParsePrefix(..)` head).
fn parse_prefix(raw: &str) -> Result<Cidr, String> {
    let Some(slash) = raw.rfind('/') else {
        return Err("no '/'".into());
    };
    let (addr, zoned) = parse_addr(&raw[..slash])?;
    if zoned {
        return Err("IPv6 zones cannot be present in a prefix".into());
    }
    let bits_text = &raw[slash + 1..];
    let bad_bits = || format!("bad bits after slash: {bits_text:?}");
    if bits_text.len() > 1 && !bits_text.starts_with(|c: char| ('1'..='9').contains(&c)) {
        return Err(bad_bits());
    }
    let bits: i64 = bits_text.parse().map_err(|_| bad_bits())?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    match u8::try_from(bits) {
        Ok(bits) if bits <= max => Ok(Cidr { addr, bits }),
        _ => Err("prefix length out of range".into()),
    }
}

/// netip's `ParseAddr`: the address and whether it had a zone, or netip's message.
fn parse_addr(raw: &str) -> Result<(IpAddr, bool), String> {
    match raw.find(['.', ':', '%']).map(|i| raw.as_bytes()[i]) {
        Some(b'.') => v4_fields(raw, raw).map(|f| (IpAddr::V4(Ipv4Addr::from(f)), false)),
        Some(b':') => parse_v6(raw),
        Some(_) => Err(addr_error(raw, "missing IPv6 address", None)),
        None => Err(addr_error(raw, "unable to parse IP", None)),
    }
}

/// netip's `parseAddrError` text.
fn addr_error(input: &str, msg: &str, at: Option<&str>) -> String {
    match at {
        Some(at) if !at.is_empty() => format!("ParseAddr({input:?}): {msg} (at {at:?})"),
        _ => format!("ParseAddr({input:?}): {msg}"),
    }
}

/// netip's `parseIPv4Fields`: the four octets of `part`, a suffix of `input` (the text
/// messages name).
fn v4_fields(input: &str, part: &str) -> Result<[u8; 4], String> {
    let fail = |msg: &str, at: Option<&str>| addr_error(input, msg, at);
    let bytes = part.as_bytes();
    let (mut fields, mut pos, mut val, mut digits) = ([0u8; 4], 0, 0u32, 0);
    for (i, &c) in bytes.iter().enumerate() {
        if c.is_ascii_digit() {
            if digits == 1 && val == 0 {
                return Err(fail("IPv4 field has octet with leading zero", None));
            }
            val = val * 10 + u32::from(c - b'0');
            digits += 1;
            if val > 255 {
                return Err(fail("IPv4 field has value >255", None));
            }
        } else if c == b'.' {
            if i == 0 || i == bytes.len() - 1 || bytes[i - 1] == b'.' {
                let msg = "IPv4 field must have at least one digit";
                return Err(fail(msg, part.get(i..)));
            }
            if pos == 3 {
                return Err(fail("IPv4 address too long", None));
            }
            fields[pos] = val as u8;
            (pos, val, digits) = (pos + 1, 0, 0);
        } else {
            let at = part.get(i..).unwrap_or_default();
            return Err(fail("unexpected character", Some(at)));
        }
    }
    if pos < 3 {
        return Err(fail("IPv4 address too short", None));
    }
    fields[3] = val as u8;
    Ok(fields)
}

/// netip's `parseIPv6`, messages included: the address and whether it had a zone.
fn parse_v6(input: &str) -> Result<(IpAddr, bool), String> {
    let fail = |msg: &str, at: Option<&str>| addr_error(input, msg, at);
    let (mut s, zoned) = match input.split_once('%') {
        Some((_, "")) => return Err(fail("zone must be a non-empty string", None)),
        Some((body, _)) => (body, true),
        None => (input, false),
    };
    let (mut ip, mut i, mut ellipsis) = ([0u8; 16], 0, None);
    if let Some(rest) = s.strip_prefix("::") {
        (ellipsis, s) = (Some(0), rest);
        if s.is_empty() {
            return Ok((IpAddr::V6(Ipv6Addr::UNSPECIFIED), zoned));
        }
    }
    while i < 16 {
        let (value, digits) = hex_group(s).map_err(|msg| fail(msg, Some(s)))?;
        if s.as_bytes().get(digits) == Some(&b'.') {
            if ellipsis.is_none() && i != 12 {
                let msg = "embedded IPv4 address must replace the final 2 fields of the address";
                return Err(fail(msg, Some(s)));
            }
            if i + 4 > 16 {
                let msg = "too many hex fields to fit an embedded IPv4 at the end of the address";
                return Err(fail(msg, Some(s)));
            }
            ip[i..i + 4].copy_from_slice(&v4_fields(input, s)?);
            (s, i) = ("", i + 4);
            break;
        }
        ip[i..i + 2].copy_from_slice(&value.to_be_bytes());
        (s, i) = (&s[digits..], i + 2);
        if s.is_empty() {
            break;
        }
        if !s.starts_with(':') {
            return Err(fail("unexpected character, want colon", Some(s)));
        } else if s.len() == 1 {
            return Err(fail("colon must be followed by more characters", Some(s)));
        }
        s = &s[1..];
        if let Some(rest) = s.strip_prefix(':') {
            if ellipsis.is_some() {
                return Err(fail("multiple :: in address", Some(s)));
            }
            (ellipsis, s) = (Some(i), rest);
            if s.is_empty() {
                break;
            }
        }
    }
    expand(input, s, ip, i, ellipsis).map(|ip| (IpAddr::V6(Ipv6Addr::from(ip)), zoned))
}

/// The leading hex group of `s` (value, digit count), or netip's message for a bad one.
fn hex_group(s: &str) -> Result<(u16, usize), &'static str> {
    let mut acc = 0u32;
    let mut digits = 0;
    for c in s.chars() {
        let Some(d) = c.to_digit(16) else { break };
        acc = (acc << 4) + d;
        if digits > 3 {
            return Err("each group must have 4 or less digits");
        }
        if acc > 0xffff {
            return Err("IPv6 field has value >=2^16");
        }
        digits += 1;
    }
    if digits == 0 {
        return Err("each colon-separated field must have at least one digit");
    }
    Ok((acc as u16, digits))
}

/// The end of netip's `parseIPv6`: nothing may be left, and `::` stands for the missing zeros.
fn expand(
    input: &str,
    rest: &str,
    mut ip: [u8; 16],
    filled: usize,
    ellipsis: Option<usize>,
) -> Result<[u8; 16], String> {
    if !rest.is_empty() {
        return Err(addr_error(
            input,
            "trailing garbage after address",
            Some(rest),
        ));
    }
    match ellipsis {
        None if filled < 16 => Err(addr_error(input, "address string too short", None)),
        Some(_) if filled == 16 => Err(addr_error(
            input,
            "the :: must expand to at least one field of zeros",
            Some(rest),
        )),
        Some(at) => {
            let n = 16 - filled;
            ip.copy_within(at..filled, at + n);
            ip[at..at + n].fill(0);
            Ok(ip)
        }
        None => Ok(ip),
    }
}

fn is_4in6(addr: IpAddr) -> bool {
    matches!(addr, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some())
}

/// The address as a number, and its family's width in bits.
fn bits_of(addr: IpAddr) -> (u128, u8) {
    match addr {
        IpAddr::V4(v4) => (u128::from(u32::from(v4)), 32),
        IpAddr::V6(v6) => (u128::from(v6), 128),
    }
}

/// `addr` with the bits after the first `bits` cleared.
fn mask(addr: IpAddr, bits: u8) -> IpAddr {
    let (value, width) = bits_of(addr);
    let host = width.saturating_sub(bits);
    let kept = value.checked_shr(u32::from(host)).unwrap_or(0);
    let masked = kept.checked_shl(u32::from(host)).unwrap_or(0);
    match addr {
        IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::from(masked as u32)),
        IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::from(masked)),
    }
}

/// netip's `Prefix.Contains`: same family, same first `bits` bits.
fn contains(cidr: &Cidr, addr: IpAddr) -> bool {
    cidr.addr.is_ipv4() == addr.is_ipv4() && mask(cidr.addr, cidr.bits) == mask(addr, cidr.bits)
}

fn is_link_local_multicast(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(v4) => v4.octets()[..3] == [224, 0, 0],
        IpAddr::V6(v6) => v6.octets()[0] == 0xff && v6.octets()[1] & 0x0f == 0x02,
    }
}

fn is_link_local_unicast(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(v4) => v4.octets()[..2] == [169, 254],
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    }
}

/// netip's `IsGlobalUnicast`: private and unique-local addresses count as global.
fn is_global_unicast(addr: IpAddr) -> bool {
    if addr == IpAddr::V4(Ipv4Addr::BROADCAST) {
        return false;
    }
    !addr.is_unspecified()
        && !addr.is_loopback()
        && !addr.is_multicast()
        && !is_link_local_unicast(addr)
}

#[cfg(test)]
#[path = "ip_tests.rs"]
mod tests;
