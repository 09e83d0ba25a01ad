//! Type checking of a CRD schema's `x-kubernetes-validations` when the CRD is written
//! (apiextensions `pkg/apis/apiextensions/validation/validation.go`, which compiles every rule
//! with `pkg/apiserver/schema/cel/compilation.go`): each rule must compile with `self` and
//! `oldSelf` typed by its schema node and give a bool, each `messageExpression` a string.
//! The errors are v1.36's: Invalid at `<schema path>.x-kubernetes-validations[i].rule` (or
//! `.messageExpression`), showing the rule as Go prints its `ValidationRule` struct; Forbidden
//! for a rule whose estimated cost ([`crate::cel_cost`]), times the number of times it can run in
//! one object, is over the budget of one expression, and for the rules of a schema whose costs
//! add up to more than the schema's budget (`validation.go`, `cel_validation.go`).

use serde_json::Value;

use crate::cel_check::check;
use crate::cel_cost::{estimate, max_cardinality};
use crate::cel_types::CelType;
use crate::field::{BadValue, ErrorType, FieldError};
use crate::node::Node;

/// v1.36's budget of one expression (`StaticEstimatedCostLimit`).
const RULE_LIMIT: u64 = 10_000_000;
/// v1.36's budget of a whole schema (`StaticEstimatedCRDCostLimit`).
const SCHEMA_LIMIT: u64 = 100_000_000;
/// How many of the most expensive rules a schema over budget names.
const MOST_EXPENSIVE: usize = 4;

/// Every rule under `schema` (a CRD's `openAPIV3Schema`, found at `path`) that v1.36 refuses
/// to compile, or refuses for its cost.
pub(crate) fn check_schema(schema: &Value, path: &str) -> Vec<FieldError> {
    let mut walk = Walk::default();
    walk.node(Node(schema), path, true, None, Some(1));
    let mut errors = walk.errors;
    if walk.total > SCHEMA_LIMIT {
        // The most expensive first; of equal ones, the first seen (Go sorts these few stably).
        walk.costs.sort_by_key(|(_, cost)| std::cmp::Reverse(*cost));
        for (field, _) in walk.costs.iter().take(MOST_EXPENSIVE) {
            errors.push(FieldError::new(
                ErrorType::Forbidden,
                field,
                BadValue::Omitted,
                "contributed to estimated rule cost total exceeding cost limit for entire \
                 OpenAPIv3 schema"
                    .into(),
            ));
        }
        let what = "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema";
        errors.push(FieldError::new(
            ErrorType::Forbidden,
            path,
            BadValue::Omitted,
            over_budget(what, walk.total, SCHEMA_LIMIT),
        ));
    }
    errors
}

/// v1.36's words for a cost over `limit` (`getCostErrorMessage`): the factor with six decimals
/// below 1.5, one above, "more than 100x" above 100.
fn over_budget(what: &str, cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let factor = if factor > 100.0 {
        "more than 100x".to_string()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!(
        "{what} exceeds budget by factor of {factor} (try simplifying the rule, or adding \
         maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

/// The errors and costs found walking a schema.
#[derive(Default)]
struct Walk {
    errors: Vec<FieldError>,
    /// The sum of every expression's cost.
    total: u64,
    /// `(field, cost)` of the expressions costing at least 1% of the schema's budget.
    costs: Vec<(String, u64)>,
}

impl Walk {
    /// Checks the rules of `node` at `path` and below; `uncorrelatable` is the highest ancestor
    /// whose old value cannot be matched to the new one (the items of a list other than a map
    /// list), where `oldSelf` is forbidden; `cardinality` how many times a value of `node` can
    /// occur in one object, `None` under a list or map without `maxItems` / `maxProperties`.
    fn node(
        &mut self,
        node: Node<'_>,
        path: &str,
        root: bool,
        uncorrelatable: Option<&str>,
        cardinality: Option<u64>,
    ) {
        if !node.rules().is_empty()
            && let Some(own) = CelType::of_rule_node(node, root)
        {
            let resource = root || node.embedded();
            let times = cardinality.unwrap_or_else(|| max_cardinality(node));
            for (i, rule) in node.rules().iter().enumerate() {
                let at = format!("{path}.x-kubernetes-validations[{i}]");
                let variables = variables(rule, &own);
                let cost = |key: &str| {
                    let source = rule.get(key).and_then(Value::as_str)?;
                    estimate(source, node, resource, &variables)
                };
                let problem = check_rule(rule, &variables);
                if let Some(("rule", detail)) = problem {
                    self.errors.push(FieldError::new(
                        ErrorType::Invalid,
                        &format!("{at}.rule"),
                        BadValue::Text(go_rule(rule)),
                        detail,
                    ));
                    continue;
                }
                let rule_cost = cost("rule").map_or(0, |c| guarded_product(c, times));
                self.observe(&format!("{at}.rule"), "estimated rule cost", rule_cost);
                match problem {
                    Some((key, detail)) => self.errors.push(FieldError::new(
                        ErrorType::Invalid,
                        &format!("{at}.{key}"),
                        BadValue::Text(go_rule(rule)),
                        detail,
                    )),
                    None => {
                        if let Some(message) = cost("messageExpression") {
                            let field = format!("{at}.messageExpression");
                            self.observe(&field, "estimated messageExpression cost", message);
                        }
                    }
                }
                old_self_errors(rule, &at, uncorrelatable, &mut self.errors);
            }
        }
        for (name, property) in node.properties() {
            let at = format!("{path}.properties[{name}]");
            self.node(property, &at, false, uncorrelatable, cardinality);
        }
        if let Some(items) = node.items() {
            // Only a map list's items correlate with old ones (by their keys).
            let within = match node.list_type() {
                Some("map") => uncorrelatable,
                _ => uncorrelatable.or(Some(path)),
            };
            let times = bounded(cardinality, node, "maxItems");
            self.node(items, &format!("{path}.items"), false, within, times);
        }
        if let Some(additional) = node.get("additionalProperties").filter(|a| a.is_object()) {
            let at = format!("{path}.additionalProperties");
            let times = bounded(cardinality, node, "maxProperties");
            self.node(Node(additional), &at, false, uncorrelatable, times);
        }
    }

    /// One expression's cost: refused over the budget of one expression, and added to the
    /// schema's total.
    fn observe(&mut self, field: &str, what: &str, cost: u64) {
        if cost > RULE_LIMIT {
            self.errors.push(FieldError::new(
                ErrorType::Forbidden,
                field,
                BadValue::Omitted,
                over_budget(what, cost, RULE_LIMIT),
            ));
        }
        self.total = self.total.saturating_add(cost);
        if cost >= SCHEMA_LIMIT / 100 {
            self.costs.push((field.to_string(), cost));
        }
    }
}

/// The cardinality of a list's items or a map's values: the list's or map's own times its
/// bound, unbounded without one (`extractMaxElements`).
fn bounded(cardinality: Option<u64>, node: Node<'_>, key: &str) -> Option<u64> {
    let bound = node.get(key)?.as_i64()?.max(0).unsigned_abs();
    Some(guarded_product(cardinality?, bound))
}

/// `multiplyWithOverflowGuard`.
fn guarded_product(cost: u64, times: u64) -> u64 {
    cost.saturating_mul(times)
}

/// `self` and `oldSelf` of a rule (an optional old self is `optional_type(self)`; optionals
/// are not typed here).
fn variables<'a>(rule: &Value, own: &CelType<'a>) -> [(&'static str, CelType<'a>); 2] {
    let old = if rule.get("optionalOldSelf") == Some(&Value::Bool(true)) {
        CelType::Dyn
    } else {
        own.clone()
    };
    [("self", own.clone()), ("oldSelf", old)]
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
fn check_rule(rule: &Value, variables: &[(&str, CelType<'_>)]) -> Option<(&'static str, String)> {
    let text = |key: &str| rule.get(key).and_then(Value::as_str).unwrap_or("");
    let source = text("rule");
    if source.trim().is_empty() {
        return None;
    }
    match check(source, variables)? {
        Err(issues) => return Some(("rule", format!("compilation failed: {issues}"))),
        Ok(CelType::Bool | CelType::Dyn) => {}
        Ok(_) => return Some(("rule", "cel expression must evaluate to a bool".into())),
    }
    let message = text("messageExpression");
    if message.is_empty() {
        return None;
    }
    match check(message, variables)? {
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
