//! The `regex` library (apiserver `pkg/cel/library/regex.go`): `find(regex)` (the first match or
//! `""`) and `findAll(regex)` / `findAll(regex, limit)` (the matches, at most `limit` when it is
//! not negative).
//!
//! # Differences from the real server
//! The `regex` crate reads the RE2 syntax Go's `regexp` does, so matches agree; a pattern that
//! does not compile is an error worded `Illegal regex: <message>`, the message being this
//! crate's, not Go's.

use std::sync::Arc;

use cel::extractors::{Arguments, This};
use cel::{Context, ExecutionError, Value};
use regex::Regex;

use super::opaque::{error, no_overload};

/// Registers the library's functions in `ctx`.
pub(crate) fn register(ctx: &mut Context<'static, 'static>) {
    let _ = ctx.add_function(
        "find",
        |This(text): This<Arc<String>>, Arguments(args): Arguments| {
            let (re, _) = read("find", &args)?;
            let found = re.find(&text).map_or("", |m| m.as_str());
            Ok::<_, ExecutionError>(Value::String(Arc::new(found.to_string())))
        },
    );
    let _ = ctx.add_function(
        "findAll",
        |This(text): This<Arc<String>>, Arguments(args): Arguments| {
            let (re, limit) = read("findAll", &args)?;
            let limit = usize::try_from(limit).unwrap_or(usize::MAX);
            let found = re
                .find_iter(&text)
                .take(limit)
                .map(|m| Value::String(Arc::new(m.as_str().to_string())));
            Ok::<_, ExecutionError>(Value::List(Arc::new(found.collect())))
        },
    );
}

/// The compiled pattern and the limit (`-1`, all, when not given).
fn read(function: &str, args: &[Value]) -> Result<(Regex, i64), ExecutionError> {
    let (pattern, limit) = match args {
        [Value::String(p)] => (p, -1),
        [Value::String(p), Value::Int(n)] => (p, *n),
        _ => return Err(no_overload(function)),
    };
    let re = Regex::new(pattern).map_err(|e| error(function, format!("Illegal regex: {e}")))?;
    Ok((re, limit))
}

#[cfg(test)]
#[path = "regex_tests.rs"]
mod tests;
