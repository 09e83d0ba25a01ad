//! The `semver` library (apiserver `pkg/cel/library/semverlib.go`): `semver()`, `isSemver()`
//! (both with the optional `normalize` flag), `major()`, `minor()`, `patch()`, and the
//! comparisons `isGreaterThan()`, `isLessThan()`, `compareTo()`, which the parent module shares
//! with quantities, asking [`compare`] first.
//!
//! # Why a parser of our own
//! v1.36 parses with `github.com/blang/semver/v4`, whose messages rules show
//! (`No Major.Minor.Patch elements found`) and whose edge cases differ from the `semver` crate:
//! numbers are `uint64` (`major()` of a larger one wraps as Go's conversion to `int64` does),
//! and build metadata takes no part in comparisons. The parser here follows blang's steps.

use std::cmp::Ordering;

use cel::extractors::{Arguments, This};
use cel::objects::Opaque;
use cel::{Context, ExecutionError, Value};

use super::opaque::{error, expect, get, no_overload, wrap};

/// Reads one number of a version.
type Part = fn(&Semver) -> u64;

/// A parsed semantic version. Its build metadata is checked, then dropped: v1.36 compares
/// (`==` included) without it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Semver {
    major: u64,
    minor: u64,
    patch: u64,
    pre: Vec<Pre>,
}

/// One dot-separated prerelease part: numeric ones sort before alphanumeric ones.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Pre {
    Num(u64),
    Str(String),
}

impl Opaque for Semver {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Semver"
    }
}

/// Registers `semver`, `isSemver`, `major`, `minor` and `patch` in `ctx`.
pub(crate) fn register(ctx: &mut Context<'static, 'static>) {
    let _ = ctx.add_function("semver", |Arguments(args): Arguments| {
        let version = parse_args("semver", &args)?;
        version.map(wrap).map_err(|e| error("semver", e))
    });
    let _ = ctx.add_function("isSemver", |Arguments(args): Arguments| {
        parse_args("isSemver", &args).map(|version| version.is_ok())
    });
    let parts: [(&str, Part); 3] = [
        ("major", |v| v.major),
        ("minor", |v| v.minor),
        ("patch", |v| v.patch),
    ];
    for (name, part) in parts {
        let _ = ctx.add_function(name, move |This(v): This<Value>| {
            // Go's conversion of a uint64 to int64 wraps; so does this.
            expect::<Semver>(name, &v).map(|v| part(v) as i64)
        });
    }
}

/// Reads `(string)` or `(string, normalize bool)` and parses the string.
fn parse_args(function: &str, args: &[Value]) -> Result<Result<Semver, String>, ExecutionError> {
    match args {
        [Value::String(s)] => Ok(parse(s)),
        [Value::String(s), Value::Bool(normalize)] => Ok(if *normalize {
            normalize_and_parse(s)
        } else {
            parse(s)
        }),
        _ => Err(no_overload(function)),
    }
}

/// The order of `a` and `b` when both are versions (blang's `Compare`: build metadata ignored).
pub(crate) fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    let (a, b) = (get::<Semver>(a)?, get::<Semver>(b)?);
    let core = (a.major, a.minor, a.patch).cmp(&(b.major, b.minor, b.patch));
    Some(
        core.then_with(|| match (a.pre.is_empty(), b.pre.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => a.pre.cmp(&b.pre),
        }),
    )
}

/// The library's `normalizeAndParse`: no `v` prefix, leading zeros dropped, missing minor and
/// patch filled with 0.
fn normalize_and_parse(s: &str) -> Result<Semver, String> {
    let s = s.strip_prefix('v').unwrap_or(s);
    let mut parts: Vec<String> = s.splitn(3, '.').map(str::to_string).collect();
    for part in &mut parts {
        if part.len() > 1 {
            let trimmed = part.trim_start_matches('0');
            *part = if trimmed.starts_with(|c: char| c.is_ascii_digit()) {
                trimmed.to_string()
            } else {
                format!("0{trimmed}")
            };
        }
    }
    if parts.len() < 3 {
        if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
            return Err("short version cannot contain PreRelease/Build meta data".into());
        }
        parts.resize(3, "0".into());
    }
    parse(&parts.join("."))
}

/// blang's `semver.Parse`, messages included.
fn parse(s: &str) -> Result<Semver, String> {
    if s.is_empty() {
        return Err("Version string empty".into());
    }
    let parts: Vec<&str> = s.splitn(3, '.').collect();
    let [major, minor, rest] = parts[..] else {
        return Err("No Major.Minor.Patch elements found".into());
    };
    let (rest, build) = match rest.split_once('+') {
        Some((rest, build)) => (rest, build.split('.').collect()),
        None => (rest, Vec::new()),
    };
    let (patch, pre) = match rest.split_once('-') {
        Some((patch, pre)) => (patch, pre.split('.').collect()),
        None => (rest, Vec::new()),
    };
    let mut version = Semver {
        major: number(major, "major", "Major")?,
        minor: number(minor, "minor", "Minor")?,
        patch: number(patch, "patch", "Patch")?,
        pre: Vec::new(),
    };
    for part in pre {
        version.pre.push(prerelease(part)?);
    }
    for part in build {
        if part.is_empty() {
            return Err("Build meta data is empty".into());
        }
        if !part.chars().all(is_alphanum) {
            return Err(format!(
                "Invalid character(s) found in build meta data {part:?}"
            ));
        }
    }
    Ok(version)
}

fn is_alphanum(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-'
}

/// A version number: digits only, no leading zero, within `u64` (Go's `ParseUint` messages).
fn number(s: &str, lower: &str, title: &str) -> Result<u64, String> {
    if !s.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!(
            "Invalid character(s) found in {lower} number {s:?}"
        ));
    }
    if s.len() > 1 && s.starts_with('0') {
        return Err(format!(
            "{title} number must not contain leading zeroes {s:?}"
        ));
    }
    parse_uint(s)
}

fn parse_uint(s: &str) -> Result<u64, String> {
    if s.is_empty() {
        return Err(format!("strconv.ParseUint: parsing {s:?}: invalid syntax"));
    }
    s.parse()
        .map_err(|_| format!("strconv.ParseUint: parsing {s:?}: value out of range"))
}

/// blang's `NewPRVersion`.
fn prerelease(s: &str) -> Result<Pre, String> {
    if s.is_empty() {
        return Err("Prerelease is empty".into());
    }
    if s.chars().all(|c| c.is_ascii_digit()) {
        if s.len() > 1 && s.starts_with('0') {
            return Err(format!(
                "Numeric PreRelease version must not contain leading zeroes {s:?}"
            ));
        }
        return parse_uint(s).map(Pre::Num);
    }
    if s.chars().all(is_alphanum) {
        return Ok(Pre::Str(s.to_string()));
    }
    Err(format!("Invalid character(s) found in prerelease {s:?}"))
}

#[cfg(test)]
#[path = "semver_tests.rs"]
mod tests;
