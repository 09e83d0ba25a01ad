//! The `format` library (apiserver `pkg/cel/library/format.go`): `format.dns1123Label()` and
//! the other named formats, `format.named(name)` (an optional format), and
//! `<format>.validate(str)`, which gives `optional.none()` for a valid string and otherwise
//! `optional.of(<list of messages>)`.
//!
//! # Why the messages are copied
//! Rules return these lists to users (`messageExpression: format.dns1123Label().validate(self)
//! .value().join(', ')`), so each validator gives apimachinery's exact words
//! (`pkg/util/validation/validation.go`). The CRD formats (`uri`, `uuid`, `byte`, `date`,
//! `datetime`) are the schema formats kube-openapi checks; `uri` gives Go's parse error.

use std::sync::{Arc, LazyLock};

use cel::extractors::This;
use cel::objects::{Opaque, OptionalValue};
use cel::{Context, ExecutionError, Value};
use regex::Regex;

use super::opaque::{expect, wrap};

/// A named format: what `format.<name>()` gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NamedFormat(&'static str);

impl Opaque for NamedFormat {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.NamedFormat"
    }
}

/// The formats, by the name `format.<name>()` uses.
const NAMES: [&str; 13] = [
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
];

/// Registers the library's functions in `ctx`.
pub(crate) fn register(ctx: &mut Context<'static, 'static>) {
    for name in NAMES {
        let _ = ctx.add_function(&format!("format.{name}"), move || wrap(NamedFormat(name)));
    }
    let _ = ctx.add_function("format.named", |name: Arc<String>| {
        let found = NAMES.iter().find(|n| **n == name.as_str());
        let optional = match found {
            Some(name) => OptionalValue::of(wrap(NamedFormat(name))),
            None => OptionalValue::none(),
        };
        Value::Opaque(Arc::new(optional))
    });
    let _ = ctx.add_function("validate", |This(f): This<Value>, s: Arc<String>| {
        let format = expect::<NamedFormat>("validate", &f)?;
        let errors = validate(format.0, &s);
        let optional = if errors.is_empty() {
            OptionalValue::none()
        } else {
            let list = errors.into_iter().map(|e| Value::String(Arc::new(e)));
            OptionalValue::of(Value::List(Arc::new(list.collect())))
        };
        Ok::<_, ExecutionError>(Value::Opaque(Arc::new(optional)))
    });
}

/// The messages of format `name` for `s`; empty when valid.
pub(crate) fn validate(name: &str, s: &str) -> Vec<String> {
    let check = |valid: bool, message: &str| {
        if valid {
            Vec::new()
        } else {
            vec![message.to_string()]
        }
    };
    match name {
        "dns1123Label" => dns1123_label(s),
        "dns1123Subdomain" => dns1123_subdomain(s),
        "dns1035Label" => dns1035_label(s),
        "qualifiedName" => qualified_name(s),
        "dns1123LabelPrefix" => dns1123_label(&mask_trailing_dash(s)),
        "dns1123SubdomainPrefix" => dns1123_subdomain(&mask_trailing_dash(s)),
        "dns1035LabelPrefix" => dns1035_label(&mask_trailing_dash(s)),
        "labelValue" => label_value(s),
        "uri" => super::url::parse_request_uri(s).err().into_iter().collect(),
        "uuid" => check(
            crate::formats::valid("uuid", s),
            "does not match the UUID format",
        ),
        "byte" => check(crate::formats::valid("byte", s), "invalid base64"),
        "date" => check(crate::formats::valid("date", s), "invalid date"),
        _ => check(crate::formats::valid("datetime", s), "invalid datetime"),
    }
}

const LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const SUBDOMAIN_FMT: &str = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const QNAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QNAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// A regex of `fmt` anchored at both ends (apimachinery's `^...$`).
fn anchored(fmt: &str) -> Regex {
    // The expressions are this file's constants, checked by its tests.
    Regex::new(&format!("^(?:{fmt})$")).unwrap_or_else(|_| unreachable!("constant regex {fmt}"))
}

static LABEL: LazyLock<Regex> = LazyLock::new(|| anchored(LABEL_FMT));
static SUBDOMAIN: LazyLock<Regex> = LazyLock::new(|| anchored(SUBDOMAIN_FMT));
static DNS1035: LazyLock<Regex> = LazyLock::new(|| anchored(DNS1035_FMT));
static QNAME: LazyLock<Regex> = LazyLock::new(|| anchored(QNAME_FMT));

/// apimachinery's `RegexError`.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let shown: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{msg} (e.g. {}regex used for validation is '{fmt}')",
        shown.join(" or ")
    )
}

fn max_len(n: usize) -> String {
    format!("must be no more than {n} characters")
}

/// apimachinery's `maskTrailingDash`: a name prefix may end in `-`.
fn mask_trailing_dash(s: &str) -> String {
    match s.strip_suffix('-') {
        Some(head) if s.len() > 1 => {
            let mut masked = head.to_string();
            masked.pop();
            masked.push('a');
            masked
        }
        _ => s.to_string(),
    }
}

/// The problems of `s` as a DNS-1123 label (a namespace name), none when it is one.
pub(crate) fn dns1123_label(s: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if s.len() > 63 {
        errors.push(max_len(63));
    }
    if !LABEL.is_match(s) {
        errors.push(if SUBDOMAIN.is_match(s) {
            "must not contain dots".to_string()
        } else {
            regex_error(LABEL_MSG, LABEL_FMT, &["my-name", "123-abc"])
        });
    }
    errors
}

/// The problems of `s` as a DNS-1123 subdomain (most object names), none when it is one.
pub(crate) fn dns1123_subdomain(s: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if s.len() > 253 {
        errors.push(max_len(253));
    }
    if !SUBDOMAIN.is_match(s) {
        errors.push(regex_error(SUBDOMAIN_MSG, SUBDOMAIN_FMT, &["example.com"]));
    }
    errors
}

fn dns1035_label(s: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if s.len() > 63 {
        errors.push(max_len(63));
    }
    if !DNS1035.is_match(s) {
        errors.push(regex_error(
            DNS1035_MSG,
            DNS1035_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errors
}

fn qualified_name(s: &str) -> Vec<String> {
    let examples = ["MyName", "my.name", "123-abc"];
    let parts: Vec<&str> = s.split('/').collect();
    let mut errors = Vec::new();
    let name = match parts[..] {
        [name] => name,
        [prefix, name] => {
            if prefix.is_empty() {
                errors.push("prefix part must be non-empty".to_string());
            } else {
                let each = dns1123_subdomain(prefix).into_iter();
                errors.extend(each.map(|m| format!("prefix part {m}")));
            }
            name
        }
        _ => {
            let shape = regex_error(QNAME_MSG, QNAME_FMT, &examples);
            return vec![format!(
                "a valid label key {shape} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )];
        }
    };
    if name.is_empty() {
        errors.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errors.push(format!("name part {}", max_len(63)));
    }
    if !QNAME.is_match(name) {
        let shape = regex_error(QNAME_MSG, QNAME_FMT, &examples);
        errors.push(format!("name part {shape}"));
    }
    errors
}

fn label_value(s: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if s.len() > 63 {
        errors.push(max_len(63));
    }
    if !s.is_empty() && !QNAME.is_match(s) {
        let fmt = format!("({QNAME_FMT})?");
        let examples = ["MyValue", "my_value", "12345"];
        errors.push(regex_error(LABEL_VALUE_MSG, &fmt, &examples));
    }
    errors
}

#[cfg(test)]
#[path = "format_tests.rs"]
mod tests;
