//! Label and field selectors, parsed and matched like apimachinery `pkg/labels/selector.go` and
//! `pkg/fields/selector.go`.
//!
//! Lists and watches filter with them; watches also evaluate them against the previous object, so
//! an object that stops matching is reported as `DELETED` and one that starts matching as `ADDED`.

use serde_json::Value;

use crate::status::ApiError;

/// One label requirement.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
    GreaterThan(String, i64),
    LessThan(String, i64),
}

/// A parsed `labelSelector`: all requirements must hold (an empty selector matches everything).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LabelSelector {
    requirements: Vec<Requirement>,
}

impl LabelSelector {
    /// Parses the query-string form, e.g. `app=web,tier in (a,b),!legacy`.
    ///
    /// # Errors
    /// 400 BadRequest with the real server's `unable to parse requirement` wording.
    pub(crate) fn parse(text: &str) -> Result<LabelSelector, ApiError> {
        let mut requirements = Vec::new();
        for part in split_top_level(text) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            requirements.push(parse_requirement(part).map_err(|why| {
                ApiError::bad_request(format!("unable to parse requirement: {why}"))
            })?);
        }
        Ok(LabelSelector { requirements })
    }

    /// Whether the selector is empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether `object`'s `metadata.labels` satisfy every requirement.
    pub(crate) fn matches(&self, object: &Value) -> bool {
        let labels = object
            .pointer("/metadata/labels")
            .and_then(Value::as_object);
        let get = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
        self.requirements.iter().all(|r| match r {
            Requirement::Equals(k, v) => get(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|x| vs.iter().all(|v| v != x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::DoesNotExist(k) => get(k).is_none(),
            Requirement::GreaterThan(k, n) => get(k)
                .and_then(|x| x.parse::<i64>().ok())
                .is_some_and(|x| x > *n),
            Requirement::LessThan(k, n) => get(k)
                .and_then(|x| x.parse::<i64>().ok())
                .is_some_and(|x| x < *n),
        })
    }
}

/// Splits on commas that are not inside parentheses.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

fn parse_requirement(part: &str) -> Result<Requirement, String> {
    if let Some(key) = part.strip_prefix('!') {
        return Ok(Requirement::DoesNotExist(label_key(key.trim())?));
    }
    for (op, is_in) in [(" notin ", false), (" in ", true)] {
        if let Some((key, rest)) = part.split_once(op) {
            let key = label_key(key.trim())?;
            let values = parse_set(rest.trim())?;
            return Ok(if is_in {
                Requirement::In(key, values)
            } else {
                Requirement::NotIn(key, values)
            });
        }
    }
    for op in ["!=", "==", "=", ">", "<"] {
        if let Some((key, value)) = part.split_once(op) {
            let key = label_key(key.trim())?;
            let value = value.trim();
            return match op {
                "!=" => Ok(Requirement::NotEquals(key, label_value(value)?)),
                ">" | "<" => {
                    let n = value.parse::<i64>().map_err(|_| {
                        format!("for 'Gt', 'Lt' operators, the value must be an integer: {value}")
                    })?;
                    Ok(if op == ">" {
                        Requirement::GreaterThan(key, n)
                    } else {
                        Requirement::LessThan(key, n)
                    })
                }
                _ => Ok(Requirement::Equals(key, label_value(value)?)),
            };
        }
    }
    Ok(Requirement::Exists(label_key(part)?))
}

fn parse_set(text: &str) -> Result<Vec<String>, String> {
    let inner = text
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .ok_or_else(|| format!("found '{text}', expected: '('"))?;
    inner.split(',').map(|v| label_value(v.trim())).collect()
}

/// Validates a label key: optional DNS subdomain prefix plus a name of at most 63 characters.
fn label_key(key: &str) -> Result<String, String> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    let name_ok = !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    let prefix_ok = prefix.is_none_or(crate::validation::is_dns1123_subdomain);
    if name_ok && prefix_ok {
        Ok(key.to_string())
    } else {
        Err(format!(
            "key: Invalid value: \"{key}\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
        ))
    }
}

/// Validates a label value: empty, or at most 63 alphanumerics, `-`, `_`, `.`, alphanumeric ends.
fn label_value(value: &str) -> Result<String, String> {
    let ok = value.is_empty()
        || (value.len() <= 63
            && value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            && value.starts_with(|c: char| c.is_ascii_alphanumeric())
            && value.ends_with(|c: char| c.is_ascii_alphanumeric()));
    if ok {
        Ok(value.to_string())
    } else {
        Err(format!(
            "values[0]: Invalid value: \"{value}\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
        ))
    }
}

/// A parsed `fieldSelector`: `field=value`, `field==value`, `field!=value`, comma-separated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FieldSelector {
    /// (dotted field path, value, negated)
    terms: Vec<(String, String, bool)>,
}

impl FieldSelector {
    /// Parses and checks every field with `check`, which gives the message for a field the
    /// resource does not support.
    ///
    /// # Errors
    /// 400 BadRequest: `invalid selector` for bad syntax, `check`'s message (the real server's
    /// wording for the kind) for an unsupported field.
    pub(crate) fn parse(
        text: &str,
        check: impl Fn(&str) -> Result<(), String>,
    ) -> Result<FieldSelector, ApiError> {
        let mut terms = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (field, value, negated) = if let Some((f, v)) = part.split_once("!=") {
                (f, v, true)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, v, false)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, v, false)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{text}'; can't understand '{part}'"
                )));
            };
            let field = field.trim();
            check(field).map_err(ApiError::bad_request)?;
            terms.push((field.to_string(), value.trim().to_string(), negated));
        }
        Ok(FieldSelector { terms })
    }

    /// `metadata.name=<name>`, for a watch on one object. Built, not parsed: a name may hold the
    /// `,` or `=` the parser splits on (apimachinery `fields.OneTermEqualSelector`).
    pub(crate) fn name_equals(name: &str) -> FieldSelector {
        FieldSelector {
            terms: vec![("metadata.name".into(), name.into(), false)],
        }
    }

    /// Whether the selector is empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Whether `object` satisfies every term (fields compare as strings; missing fields are "").
    pub(crate) fn matches(&self, object: &Value) -> bool {
        self.terms.iter().all(|(field, value, negated)| {
            let actual = field_value(object, field);
            (actual == *value) != *negated
        })
    }
}

/// Reads a dotted path as the string the real server's field indexers produce.
fn field_value(object: &Value, field: &str) -> String {
    let mut current = object;
    for segment in field.split('.') {
        match current.get(segment) {
            Some(next) => current = next,
            None => return String::new(),
        }
    }
    match current {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labelled(labels: Value) -> Value {
        json!({"metadata": {"name": "x", "labels": labels}})
    }

    #[test]
    fn every_label_operator_matches_like_apimachinery() {
        let obj = labelled(json!({"app": "web", "tier": "front", "n": "5"}));
        for (sel, want) in [
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("app!=db", true),
            ("tier in (front,back)", true),
            ("tier notin (front)", false),
            ("missing notin (a)", true),
            ("app", true),
            ("!app", false),
            ("!missing", true),
            ("app=web,tier=back", false),
            ("n>4", true),
            ("n<5", false),
            ("", true),
        ] {
            assert_eq!(
                LabelSelector::parse(sel).unwrap().matches(&obj),
                want,
                "{sel}"
            );
        }
    }

    #[test]
    fn malformed_label_selectors_are_bad_requests() {
        for sel in ["app=web web", "tier in front", "a b", "x=(", "n>abc"] {
            let err = LabelSelector::parse(sel).unwrap_err();
            assert_eq!((err.code, &*err.reason), (400, "BadRequest"), "{sel}");
            assert!(
                err.message.starts_with("unable to parse requirement"),
                "{}",
                err.message
            );
        }
    }

    #[test]
    fn field_selectors_reject_unsupported_fields() {
        let err = FieldSelector::parse("spec.foo=bar", |f| {
            (f == "metadata.name")
                .then_some(())
                .ok_or_else(|| format!("field label not supported: {f}"))
        })
        .unwrap_err();
        assert_eq!(err.message, "field label not supported: spec.foo");
        assert_eq!(err.code, 400);
    }

    #[test]
    fn name_selectors_take_any_name_literally() {
        let sel = FieldSelector::name_equals("a,b=c");
        assert!(sel.matches(&json!({"metadata": {"name": "a,b=c"}})));
        assert!(!sel.matches(&json!({"metadata": {"name": "a"}})));
    }

    #[test]
    fn field_selectors_compare_dotted_paths() {
        let sel =
            FieldSelector::parse(
                "metadata.name=x,metadata.namespace!=kube-system",
                |_| Ok(()),
            )
            .unwrap();
        assert!(sel.matches(&json!({"metadata": {"name": "x", "namespace": "default"}})));
        assert!(!sel.matches(&json!({"metadata": {"name": "x", "namespace": "kube-system"}})));
    }
}
