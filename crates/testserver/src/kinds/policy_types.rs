//! The type errors v1.36 finds in an admission policy's expressions when the policy is
//! written (`pkg/apis/admissionregistration/validation/validation.go` compiles each one with the
//! variables of apiserver `pkg/admission/plugin/cel/compile.go`): `compilation failed: ...`
//! for an expression that does not type-check, `must evaluate to bool but got string` for one of
//! another type than its place wants. The checker is
//! [`kubegen_apiextensions::check_policy_expression`]; what it cannot type is `dyn` and passes
//! here (the provably untyped results are `admission_policy`'s).

use serde_json::{Map, Value, json};

use kubegen_apiextensions::{PolicyScope, check_policy_expression};

use crate::status::{Cause, cause};

/// The scope of a policy's validations: `params` with a `paramKind`, the authorizer, its
/// variables.
pub(crate) fn scope_of(spec: &Map<String, Value>) -> PolicyScope {
    let variables = spec
        .get("variables")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|v| (text(v, "name"), text(v, "expression")))
        .collect();
    PolicyScope {
        params: spec.get("paramKind").is_some(),
        authorizer: true,
        variables: Some(variables),
    }
}

fn text(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// v1.36's type error for `source` at `field`, if any: it must type-check and give one of
/// `want` (cel-go's names: `bool`, `string`, `null_type`; any type when empty).
pub(crate) fn type_causes(
    source: &str,
    field: &str,
    scope: &PolicyScope,
    want: &[&str],
) -> Vec<Cause> {
    let detail = match check_policy_expression(source, scope) {
        None => return Vec::new(),
        Some(Err(issues)) => format!("compilation failed: {issues}"),
        Some(Ok(_)) if want.is_empty() => return Vec::new(),
        Some(Ok(found)) if found == "dyn" || want.contains(&found.as_str()) => return Vec::new(),
        Some(Ok(found)) => match want {
            [one] => format!("must evaluate to {one} but got {found}"),
            many => format!(
                "must evaluate to one of [{}] but got {found}",
                many.join(" ")
            ),
        },
    };
    vec![cause(
        "FieldValueInvalid",
        field,
        format!("Invalid value: {}: {detail}", json!(source)),
    )]
}

/// The scope of `variables[i]`: the variables before it.
pub(crate) fn scope_before(scope: &PolicyScope, i: usize) -> PolicyScope {
    let mut before = scope.clone();
    if let Some(variables) = &mut before.variables {
        variables.truncate(i);
    }
    before
}
