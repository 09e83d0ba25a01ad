//! The function declarations the type checker knows: CEL's standard library (cel-go
//! `common/stdlib`), the strings, sets and lists extensions (`ext/`), and Kubernetes' libraries
//! (apiserver `pkg/cel/library`: quantity, ip, cidr, url, regex, lists, semver, format) — the
//! ones [`crate::cel_library`] evaluates — written as cel-go prints signatures:
//! `(int, int)` for a global function or operator, `string.(string)` for a method.
//!
//! Names the environment declares without a typed signature here ([`UNTYPED`]) give `dyn`, so a
//! rule using them is accepted, never refused.

use std::collections::HashMap;
use std::sync::LazyLock;

use crate::cel_types::CelType;

/// One overload: receiver (for a method), parameters, result.
pub(crate) struct Overload {
    pub(crate) receiver: Option<CelType<'static>>,
    pub(crate) params: Vec<CelType<'static>>,
    pub(crate) result: CelType<'static>,
}

/// `(name, signature, result)`.
const DECLARATIONS: &[(&str, &str, &str)] = &[
    ("_&&_", "(bool, bool)", "bool"),
    ("_||_", "(bool, bool)", "bool"),
    ("!_", "(bool)", "bool"),
    ("@not_strictly_false", "(bool)", "bool"),
    ("_?_:_", "(bool, A, A)", "A"),
    ("_==_", "(A, A)", "bool"),
    ("_!=_", "(A, A)", "bool"),
    ("-_", "(int)", "int"),
    ("-_", "(double)", "double"),
    ("_+_", "(int, int)", "int"),
    ("_+_", "(uint, uint)", "uint"),
    ("_+_", "(double, double)", "double"),
    ("_+_", "(string, string)", "string"),
    ("_+_", "(bytes, bytes)", "bytes"),
    ("_+_", "(list(A), list(A))", "list(A)"),
    ("_+_", "(timestamp, duration)", "timestamp"),
    ("_+_", "(duration, timestamp)", "timestamp"),
    ("_+_", "(duration, duration)", "duration"),
    ("_-_", "(int, int)", "int"),
    ("_-_", "(uint, uint)", "uint"),
    ("_-_", "(double, double)", "double"),
    ("_-_", "(timestamp, timestamp)", "duration"),
    ("_-_", "(timestamp, duration)", "timestamp"),
    ("_-_", "(duration, duration)", "duration"),
    ("_*_", "(int, int)", "int"),
    ("_*_", "(uint, uint)", "uint"),
    ("_*_", "(double, double)", "double"),
    ("_/_", "(int, int)", "int"),
    ("_/_", "(uint, uint)", "uint"),
    ("_/_", "(double, double)", "double"),
    ("_%_", "(int, int)", "int"),
    ("_%_", "(uint, uint)", "uint"),
    ("_[_]", "(list(A), int)", "A"),
    ("_[_]", "(list(A), uint)", "A"),
    ("_[_]", "(map(K, V), K)", "V"),
    ("@in", "(A, list(A))", "bool"),
    ("@in", "(K, map(K, V))", "bool"),
    ("size", "(string)", "int"),
    ("size", "(bytes)", "int"),
    ("size", "(list(A))", "int"),
    ("size", "(map(K, V))", "int"),
    ("size", "string.()", "int"),
    ("size", "bytes.()", "int"),
    ("size", "list(A).()", "int"),
    ("size", "map(K, V).()", "int"),
    ("int", "(int)", "int"),
    ("int", "(uint)", "int"),
    ("int", "(double)", "int"),
    ("int", "(string)", "int"),
    ("int", "(timestamp)", "int"),
    ("int", "(duration)", "int"),
    ("uint", "(int)", "uint"),
    ("uint", "(uint)", "uint"),
    ("uint", "(double)", "uint"),
    ("uint", "(string)", "uint"),
    ("double", "(int)", "double"),
    ("double", "(uint)", "double"),
    ("double", "(double)", "double"),
    ("double", "(string)", "double"),
    ("string", "(int)", "string"),
    ("string", "(uint)", "string"),
    ("string", "(double)", "string"),
    ("string", "(string)", "string"),
    ("string", "(bool)", "string"),
    ("string", "(bytes)", "string"),
    ("string", "(timestamp)", "string"),
    ("string", "(duration)", "string"),
    ("string", "(net.IP)", "string"),
    ("string", "(net.CIDR)", "string"),
    ("bytes", "(string)", "bytes"),
    ("bytes", "(bytes)", "bytes"),
    ("bool", "(bool)", "bool"),
    ("bool", "(string)", "bool"),
    ("timestamp", "(string)", "timestamp"),
    ("timestamp", "(int)", "timestamp"),
    ("timestamp", "(timestamp)", "timestamp"),
    ("duration", "(string)", "duration"),
    ("duration", "(duration)", "duration"),
    ("dyn", "(A)", "dyn"),
    ("type", "(A)", "type"),
    ("contains", "string.(string)", "bool"),
    ("startsWith", "string.(string)", "bool"),
    ("endsWith", "string.(string)", "bool"),
    ("matches", "string.(string)", "bool"),
    ("matches", "(string, string)", "bool"),
    ("charAt", "string.(int)", "string"),
    ("indexOf", "string.(string)", "int"),
    ("indexOf", "string.(string, int)", "int"),
    ("lastIndexOf", "string.(string)", "int"),
    ("lastIndexOf", "string.(string, int)", "int"),
    ("lowerAscii", "string.()", "string"),
    ("upperAscii", "string.()", "string"),
    ("replace", "string.(string, string)", "string"),
    ("replace", "string.(string, string, int)", "string"),
    ("split", "string.(string)", "list(string)"),
    ("split", "string.(string, int)", "list(string)"),
    ("substring", "string.(int)", "string"),
    ("substring", "string.(int, int)", "string"),
    ("trim", "string.()", "string"),
    ("join", "list(string).()", "string"),
    ("join", "list(string).(string)", "string"),
    ("reverse", "string.()", "string"),
    ("reverse", "list(A).()", "list(A)"),
    ("find", "string.(string)", "string"),
    ("findAll", "string.(string)", "list(string)"),
    ("findAll", "string.(string, int)", "list(string)"),
    ("isSorted", "list(A).()", "bool"),
    ("sum", "list(A).()", "A"),
    ("min", "list(A).()", "A"),
    ("max", "list(A).()", "A"),
    ("indexOf", "list(A).(A)", "int"),
    ("lastIndexOf", "list(A).(A)", "int"),
    ("sets.contains", "(list(A), list(A))", "bool"),
    ("sets.equivalent", "(list(A), list(A))", "bool"),
    ("sets.intersects", "(list(A), list(A))", "bool"),
    ("getFullYear", "timestamp.()", "int"),
    ("getMonth", "timestamp.()", "int"),
    ("getDayOfYear", "timestamp.()", "int"),
    ("getDayOfMonth", "timestamp.()", "int"),
    ("getDate", "timestamp.()", "int"),
    ("getDayOfWeek", "timestamp.()", "int"),
    ("getFullYear", "timestamp.(string)", "int"),
    ("getMonth", "timestamp.(string)", "int"),
    ("getDayOfYear", "timestamp.(string)", "int"),
    ("getDayOfMonth", "timestamp.(string)", "int"),
    ("getDate", "timestamp.(string)", "int"),
    ("getDayOfWeek", "timestamp.(string)", "int"),
    ("getHours", "timestamp.()", "int"),
    ("getMinutes", "timestamp.()", "int"),
    ("getSeconds", "timestamp.()", "int"),
    ("getMilliseconds", "timestamp.()", "int"),
    ("getHours", "timestamp.(string)", "int"),
    ("getMinutes", "timestamp.(string)", "int"),
    ("getSeconds", "timestamp.(string)", "int"),
    ("getMilliseconds", "timestamp.(string)", "int"),
    ("getHours", "duration.()", "int"),
    ("getMinutes", "duration.()", "int"),
    ("getSeconds", "duration.()", "int"),
    ("getMilliseconds", "duration.()", "int"),
    ("quantity", "(string)", "kubernetes.Quantity"),
    ("isQuantity", "(string)", "bool"),
    (
        "isGreaterThan",
        "kubernetes.Quantity.(kubernetes.Quantity)",
        "bool",
    ),
    (
        "isLessThan",
        "kubernetes.Quantity.(kubernetes.Quantity)",
        "bool",
    ),
    (
        "compareTo",
        "kubernetes.Quantity.(kubernetes.Quantity)",
        "int",
    ),
    (
        "add",
        "kubernetes.Quantity.(kubernetes.Quantity)",
        "kubernetes.Quantity",
    ),
    ("add", "kubernetes.Quantity.(int)", "kubernetes.Quantity"),
    (
        "sub",
        "kubernetes.Quantity.(kubernetes.Quantity)",
        "kubernetes.Quantity",
    ),
    ("sub", "kubernetes.Quantity.(int)", "kubernetes.Quantity"),
    ("asInteger", "kubernetes.Quantity.()", "int"),
    ("asApproximateFloat", "kubernetes.Quantity.()", "double"),
    ("isInteger", "kubernetes.Quantity.()", "bool"),
    ("sign", "kubernetes.Quantity.()", "int"),
    ("ip", "(string)", "net.IP"),
    ("isIP", "(string)", "bool"),
    ("ip.isCanonical", "(string)", "bool"),
    ("family", "net.IP.()", "int"),
    ("isUnspecified", "net.IP.()", "bool"),
    ("isLoopback", "net.IP.()", "bool"),
    ("isLinkLocalMulticast", "net.IP.()", "bool"),
    ("isLinkLocalUnicast", "net.IP.()", "bool"),
    ("isGlobalUnicast", "net.IP.()", "bool"),
    ("cidr", "(string)", "net.CIDR"),
    ("isCIDR", "(string)", "bool"),
    ("containsIP", "net.CIDR.(string)", "bool"),
    ("containsIP", "net.CIDR.(net.IP)", "bool"),
    ("containsCIDR", "net.CIDR.(string)", "bool"),
    ("containsCIDR", "net.CIDR.(net.CIDR)", "bool"),
    ("ip", "net.CIDR.()", "net.IP"),
    ("masked", "net.CIDR.()", "net.CIDR"),
    ("prefixLength", "net.CIDR.()", "int"),
    ("url", "(string)", "kubernetes.URL"),
    ("isURL", "(string)", "bool"),
    ("getScheme", "kubernetes.URL.()", "string"),
    ("getHost", "kubernetes.URL.()", "string"),
    ("getHostname", "kubernetes.URL.()", "string"),
    ("getPort", "kubernetes.URL.()", "string"),
    ("getEscapedPath", "kubernetes.URL.()", "string"),
    ("getQuery", "kubernetes.URL.()", "map(string, list(string))"),
    ("semver", "(string)", "kubernetes.Semver"),
    ("semver", "(string, bool)", "kubernetes.Semver"),
    ("isSemver", "(string)", "bool"),
    ("isSemver", "(string, bool)", "bool"),
    ("major", "kubernetes.Semver.()", "int"),
    ("minor", "kubernetes.Semver.()", "int"),
    ("patch", "kubernetes.Semver.()", "int"),
    (
        "isGreaterThan",
        "kubernetes.Semver.(kubernetes.Semver)",
        "bool",
    ),
    (
        "isLessThan",
        "kubernetes.Semver.(kubernetes.Semver)",
        "bool",
    ),
    ("compareTo", "kubernetes.Semver.(kubernetes.Semver)", "int"),
    (
        "validate",
        "kubernetes.NamedFormat.(string)",
        "optional_type(list(string))",
    ),
];

/// The ordering operators, each over these pairs of operand types (the numbers compare across
/// types: v1.36 enables cel-go's cross-type numeric comparisons).
const ORDERING: [&str; 4] = ["_<_", "_<=_", "_>_", "_>=_"];
const ORDERED: [&str; 14] = [
    "(int, int)",
    "(int, uint)",
    "(int, double)",
    "(uint, int)",
    "(uint, uint)",
    "(uint, double)",
    "(double, int)",
    "(double, uint)",
    "(double, double)",
    "(string, string)",
    "(bytes, bytes)",
    "(bool, bool)",
    "(timestamp, timestamp)",
    "(duration, duration)",
];

/// Names declared in v1.36's environment that the checker does not type: calls to them are
/// `dyn` and their arguments are not checked.
pub(crate) const UNTYPED: &[&str] = &[
    "format",
    "quote",
    "all",
    "exists",
    "existsOne",
    "exists_one",
    "transformList",
    "transformMap",
    "transformMapEntry",
    "hasValue",
    "value",
    "or",
    "orValue",
    "optMap",
    "optFlatMap",
    "_?._",
    "_[?_]",
    "distinct",
    "flatten",
    "slice",
    "sort",
    "sortBy",
    "first",
    "last",
    "check",
    "allowed",
    "reason",
    "errored",
    "error",
    "group",
    "resource",
    "subresource",
    "namespace",
    "name",
    "path",
    "serviceAccount",
    "fieldSelector",
    "labelSelector",
    "getType",
    "asQuantity",
];

/// The overloads of every typed name.
pub(crate) static OVERLOADS: LazyLock<HashMap<&'static str, Vec<Overload>>> = LazyLock::new(|| {
    let mut all: HashMap<&'static str, Vec<Overload>> = HashMap::new();
    let ordering = ORDERING
        .iter()
        .flat_map(|op| ORDERED.iter().map(move |pair| (*op, *pair, "bool")));
    for (name, signature, result) in DECLARATIONS.iter().copied().chain(ordering) {
        let (receiver, params) = match signature.split_once(".(") {
            Some((receiver, params)) => (Some(parse(receiver)), params),
            None => (None, signature.strip_prefix('(').unwrap_or(signature)),
        };
        let params = params.strip_suffix(')').unwrap_or(params);
        all.entry(name).or_default().push(Overload {
            receiver,
            params: split_top(params).into_iter().map(parse).collect(),
            result: parse(result),
        });
    }
    all
});

/// The type `text` spells (`list(A)`, `map(string, int)`, `net.IP`).
fn parse(text: &'static str) -> CelType<'static> {
    let text = text.trim();
    let inner = |prefix: &str| {
        text.strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix(')'))
    };
    if let Some(item) = inner("list(") {
        return CelType::List(Box::new(parse(item)));
    }
    if let Some(inside) = inner("optional_type(") {
        return CelType::Optional(Box::new(parse(inside)));
    }
    if let Some(pair) = inner("map(") {
        let mut parts = split_top(pair).into_iter().map(parse);
        let key = parts.next().unwrap_or(CelType::Dyn);
        let value = parts.next().unwrap_or(CelType::Dyn);
        return CelType::Map(Box::new(key), Box::new(value));
    }
    match text {
        "bool" => CelType::Bool,
        "int" => CelType::Int,
        "uint" => CelType::Uint,
        "double" => CelType::Double,
        "string" => CelType::String,
        "bytes" => CelType::Bytes,
        "dyn" => CelType::Dyn,
        "type" => CelType::Type,
        "timestamp" => CelType::Timestamp,
        "duration" => CelType::Duration,
        "A" | "K" | "V" => CelType::Param(text),
        other => CelType::Opaque(other),
    }
}

/// `text` split at the commas outside parentheses; empty for an empty list.
fn split_top(text: &'static str) -> Vec<&'static str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !text[start..].trim().is_empty() {
        parts.push(&text[start..]);
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_parse_into_types() {
        let plus = &OVERLOADS["_+_"];
        assert!(plus.iter().any(|o| o.receiver.is_none()
            && o.params
                == [
                    CelType::List(Box::new(CelType::Param("A"))),
                    CelType::List(Box::new(CelType::Param("A")))
                ]));
        let get_query = &OVERLOADS["getQuery"][0];
        assert_eq!(get_query.receiver, Some(CelType::Opaque("kubernetes.URL")));
        assert!(get_query.params.is_empty());
        assert_eq!(get_query.result.to_string(), "map(string, list(string))");
    }
}
