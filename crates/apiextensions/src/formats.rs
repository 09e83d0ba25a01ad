//! The string formats a CRD schema may name and the real server checks (kube-openapi's
//! `strfmt.Default` registry, as `apiextensions-apiserver` uses it). A format this list does not
//! know is not checked, as there.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

use base64::Engine;
use regex::Regex;

/// Whether `s` is a valid `format`.
pub(crate) fn valid(format: &str, s: &str) -> bool {
    match format {
        "email" => email(s),
        "hostname" => hostname(s),
        "ipv4" => s.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => s.parse::<Ipv6Addr>().is_ok(),
        "cidr" => cidr(s),
        "mac" => matches(&MAC, s),
        "uuid" => matches(&UUID, s),
        "uuid3" => matches(&UUID, s) && version(s) == Some('3'),
        "uuid4" => matches(&UUID, s) && version(s) == Some('4'),
        "uuid5" => matches(&UUID, s) && version(s) == Some('5'),
        "byte" => base64::engine::general_purpose::STANDARD.decode(s).is_ok(),
        "date" => s.parse::<jiff::civil::Date>().is_ok() && s.len() == 10,
        "date-time" | "datetime" => date_time(s),
        "duration" => matches(&DURATION, s),
        "hexcolor" => matches(&HEX_COLOR, s),
        "rgbcolor" => matches(&RGB_COLOR, s),
        "bsonobjectid" => s.len() == 24 && s.chars().all(|c| c.is_ascii_hexdigit()),
        _ => true,
    }
}

fn compile(re: &str) -> Regex {
    // The expressions are constants of this file, tested by its tests.
    Regex::new(re).unwrap_or_else(|_| unreachable!("constant regex {re}"))
}

static MAC: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r"^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{2}[:-]){7}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}$",
    )
});
static UUID: LazyLock<Regex> = LazyLock::new(|| {
    compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
});
static DURATION: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r"^(?:[-+]?\d+(?:\.\d+)?\s*(?:ns|us|µs|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?)\s*)+$",
    )
});
static HEX_COLOR: LazyLock<Regex> =
    LazyLock::new(|| compile(r"^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"));
static RGB_COLOR: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$",
    )
});
static DATE_TIME: LazyLock<Regex> = LazyLock::new(|| {
    compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$")
});

fn matches(re: &Regex, s: &str) -> bool {
    re.is_match(s)
}

fn version(s: &str) -> Option<char> {
    s.chars().filter(|c| *c != '-').nth(12)
}

/// Go's `mail.ParseAddress` in its common forms: `local@domain` or `Name <local@domain>`.
fn email(s: &str) -> bool {
    let address = match (s.find('<'), s.strip_suffix('>')) {
        (Some(open), Some(inner)) => &inner[open + 1..],
        _ => s,
    };
    let Some((local, domain)) = address.rsplit_once('@') else {
        return false;
    };
    let atom = |part: &str| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_alphanumeric() || "!#$%&'*+-/=?^_`{|}~.".contains(c))
    };
    atom(local) && atom(domain) && !domain.starts_with('.') && !domain.ends_with('.')
}

/// RFC 1123 host names of at most 255 characters (kube-openapi's `IsHostname`).
fn hostname(s: &str) -> bool {
    let s = s.strip_suffix('.').unwrap_or(s);
    !s.is_empty()
        && s.len() <= 255
        && s.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

fn cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    match ip.parse::<IpAddr>() {
        Ok(IpAddr::V4(_)) => bits <= 32,
        Ok(IpAddr::V6(_)) => bits <= 128,
        Err(_) => false,
    }
}

fn date_time(s: &str) -> bool {
    if !DATE_TIME.is_match(s) {
        return false;
    }
    let date = &s[..10];
    let (hour, minute, second) = (&s[11..13], &s[14..16], &s[17..19]);
    let within = |text: &str, max: u32| text.parse::<u32>().is_ok_and(|n| n <= max);
    date.parse::<jiff::civil::Date>().is_ok()
        && within(hour, 23)
        && within(minute, 59)
        && within(second, 60)
}
