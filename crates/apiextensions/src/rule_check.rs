//! Type checking of a CRD schema's `x-kubernetes-validations` when the CRD is written
//! (apiextensions `pkg/apis/apiextensions/validation/validation.go`, which compiles every rule
//! with `pkg/apiserver/schema/cel/compilation.go`): each rule must compile with `self` and
//! `oldSelf` typed by its schema node and give a bool, each `messageExpression` a string.
//! The errors are v1.36's: Invalid at `<schema path>.x-kubernetes-validations[i].rule` (or
//! `.messageExpression`), showing the rule as Go prints its `ValidationRule` struct; Forbidden
//! for a rule whose cost is certainly more than 100 times over budget ([`crate::cel_cost`]).

use serde_json::Value;

use crate::cel_check::check;
use crate::cel_cost::{SURE_LIMIT, lower_bound, over_budget};
use crate::cel_types::CelType;
use crate::field::{BadValue, ErrorType, FieldError};
use crate::node::Node;

/// Every rule under `schema` (a CRD's `openAPIV3Schema`, found at `path`) that v1.36 refuses
/// to compile.
pub(crate) fn check_schema(schema: &Value, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    walk(Node(schema), path, true, None, &mut errors);
    if errors.iter().any(|e| e.kind == ErrorType::Forbidden) {
        let what = "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema";
        errors.push(FieldError::new(
            ErrorType::Forbidden,
            path,
            BadValue::Omitted,
            over_budget(what),
        ));
    }
    errors
}

/// Checks the rules of `node` at `path` and below; `uncorrelatable` is the highest ancestor
/// whose old value cannot be matched to the new one (the items of a list other than a map
/// list), where `oldSelf` is forbidden.
fn walk(
    node: Node<'_>,
    path: &str,
    root: bool,
    uncorrelatable: Option<&str>,
    errors: &mut Vec<FieldError>,
) {
    if !node.rules().is_empty()
        && let Some(own) = CelType::of_rule_node(node, root)
    {
        for (i, rule) in node.rules().iter().enumerate() {
            let at = format!("{path}.x-kubernetes-validations[{i}]");
            match check_rule(rule, &own) {
                Some((key, detail)) => errors.push(FieldError::new(
                    ErrorType::Invalid,
                    &format!("{at}.{key}"),
                    BadValue::Text(go_rule(rule)),
                    detail,
                )),
                None => {
                    cost_errors(rule, node, &at, errors);
                    old_self_errors(rule, &at, uncorrelatable, errors);
                }
            }
        }
    }
    for (name, property) in node.properties() {
        let at = format!("{path}.properties[{name}]");
        walk(property, &at, false, uncorrelatable, errors);
    }
    if let Some(items) = node.items() {
        // Only a map list's items correlate with old ones (by their keys).
        let within = match node.list_type() {
            Some("map") => uncorrelatable,
            _ => uncorrelatable.or(Some(path)),
        };
        walk(items, &format!("{path}.items"), false, within, errors);
    }
    if let Some(additional) = node.get("additionalProperties").filter(|a| a.is_object()) {
        let at = format!("{path}.additionalProperties");
        walk(Node(additional), &at, false, uncorrelatable, errors);
    }
}

/// v1.36's errors for a rule (or its message expression) certain to cost more than 100 times
/// the budget: the rule's own, and its share of the schema's total (the total's error follows
/// all rules).
fn cost_errors(rule: &Value, node: Node<'_>, at: &str, errors: &mut Vec<FieldError>) {
    for (key, what) in [
        ("rule", "estimated rule cost"),
        ("messageExpression", "estimated messageExpression cost"),
    ] {
        let Some(source) = rule.get(key).and_then(Value::as_str) else {
            continue;
        };
        if lower_bound(source, node).is_some_and(|cost| cost >= SURE_LIMIT) {
            let field = format!("{at}.{key}");
            let share = "contributed to estimated rule cost total exceeding cost limit for \
                         entire OpenAPIv3 schema";
            for detail in [over_budget(what), share.to_string()] {
                errors.push(FieldError::new(
                    ErrorType::Forbidden,
                    &field,
                    BadValue::Omitted,
                    detail,
                ));
            }
        }
    }
}

/// A transition rule where there is no old value to compare with, and `optionalOldSelf` on a
/// rule that is no transition rule.
fn old_self_errors(
    rule: &Value,
    at: &str,
    uncorrelatable: Option<&str>,
    errors: &mut Vec<FieldError>,
) {
    let Some(source) = rule.get("rule").and_then(Value::as_str) else {
        return;
    };
    let Ok(program) = crate::cel_library::ENV.compile(source) else {
        return;
    };
    if program.references().has_variable("oldSelf") {
        if let Some(within) = uncorrelatable {
            errors.push(FieldError::shown(
                ErrorType::Invalid,
                &format!("{at}.rule"),
                &Value::String(source.to_string()),
                format!(
                    "oldSelf cannot be used on the uncorrelatable portion of the schema within {within}"
                ),
            ));
        }
    } else if let Some(optional) = rule.get("optionalOldSelf").filter(|o| o.is_boolean()) {
        errors.push(FieldError::shown(
            ErrorType::Invalid,
            &format!("{at}.optionalOldSelf"),
            optional,
            "may not be set if oldSelf is not used in rule".into(),
        ));
    }
}

/// The first problem of one rule: `("rule" | "messageExpression", detail)`.
fn check_rule(rule: &Value, own: &CelType<'_>) -> Option<(&'static str, String)> {
    let text = |key: &str| rule.get(key).and_then(Value::as_str).unwrap_or("");
    let source = text("rule");
    if source.trim().is_empty() {
        return None;
    }
    // An optional old self is `optional_type(self)`; optionals are not typed here.
    let old = if rule.get("optionalOldSelf") == Some(&Value::Bool(true)) {
        CelType::Dyn
    } else {
        own.clone()
    };
    let variables = [("self", own.clone()), ("oldSelf", old)];
    match check(source, &variables)? {
        Err(issues) => return Some(("rule", format!("compilation failed: {issues}"))),
        Ok(CelType::Bool | CelType::Dyn) => {}
        Ok(_) => return Some(("rule", "cel expression must evaluate to a bool".into())),
    }
    let message = text("messageExpression");
    if message.is_empty() {
        return None;
    }
    match check(message, &variables)? {
        Err(issues) => Some((
            "messageExpression",
            format!("messageExpression compilation failed: {issues}"),
        )),
        Ok(CelType::String | CelType::Dyn) => None,
        Ok(_) => Some((
            "messageExpression",
            "messageExpression must evaluate to a string".into(),
        )),
    }
}

/// The rule as Go's `%v` of the internal `ValidationRule` prints it: JSON with Go's field names
/// and HTML-safe escaping.
fn go_rule(rule: &Value) -> String {
    let text = |key: &str| {
        let s = rule.get(key).and_then(Value::as_str).unwrap_or("");
        html_safe(&Value::String(s.to_string()).to_string())
    };
    let or_null = |key: &str| match rule.get(key) {
        Some(v @ (Value::String(_) | Value::Bool(_))) => html_safe(&v.to_string()),
        _ => "null".to_string(),
    };
    format!(
        "{{\"Rule\":{},\"Message\":{},\"MessageExpression\":{},\"Reason\":{},\"FieldPath\":{},\"OptionalOldSelf\":{}}}",
        text("rule"),
        text("message"),
        text("messageExpression"),
        or_null("reason"),
        text("fieldPath"),
        or_null("optionalOldSelf"),
    )
}

/// Go's `encoding/json` escapes `<`, `>` and `&`.
fn html_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}
