//! What v1.36's policy type checker reads out of a ValidatingAdmissionPolicy and writes back
//! (apiserver `pkg/admission/plugin/policy/validating/typechecking.go`), as pure functions over
//! the policy's JSON: which resources to type `object` with, and the warning of each expression.
//!
//! - Only exact rules count: a rule whose groups or versions hold a `*` is skipped whole, and a
//!   resource with a `*` or a `/` (a subresource) is skipped alone.
//! - Kinds are checked in group, version, kind order, at most ten of them.
//! - A warning is one block per kind whose check failed, `<gvk>: <cel-go issues>\n`, the blocks
//!   joined by a blank line; the kind is written as Go prints a `GroupVersionKind`
//!   (`apps/v1, Kind=Deployment`, `/v1, Kind=Pod`).
//! - Only `spec.validations[*].expression` and `.messageExpression` are checked, as v1.36 does.

use serde_json::Value;

/// The most kinds one policy is checked against (`maxTypesToCheck`).
pub(crate) const MAX_KINDS: usize = 10;

/// A resource named by a policy rule: group, version, plural.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Resource {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) plural: String,
}

/// A kind to type `object` with.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Kind {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) kind: String,
}

impl Kind {
    /// As Go's `schema.GroupVersionKind.String()` prints it.
    pub(crate) fn go_string(&self) -> String {
        format!("{}/{}, Kind={}", self.group, self.version, self.kind)
    }
}

/// One `status.typeChecking.expressionWarnings` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Warning {
    pub(crate) field_ref: String,
    pub(crate) warning: String,
}

/// The resources of `spec.matchConstraints.resourceRules` to type-check against, rule by rule,
/// each rule's in group, version, resource order (`typesToCheck` before mapping to kinds).
pub(crate) fn resources(policy: &Value) -> Vec<Vec<Resource>> {
    let rules = policy["spec"]["matchConstraints"]["resourceRules"].as_array();
    rules
        .into_iter()
        .flatten()
        .map(|rule| {
            let exact = |key: &str, forbidden: &[char]| -> Option<Vec<String>> {
                let mut out = Vec::new();
                for value in rule[key].as_array().into_iter().flatten() {
                    let value = value.as_str().unwrap_or_default();
                    if value.contains(forbidden) {
                        return None;
                    }
                    out.push(value.to_owned());
                }
                out.sort();
                Some(out)
            };
            let (Some(groups), Some(versions)) =
                (exact("apiGroups", &['*']), exact("apiVersions", &['*']))
            else {
                return Vec::new();
            };
            let mut plurals: Vec<String> = rule["resources"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .filter(|resource| !resource.contains(['*', '/']))
                .map(str::to_owned)
                .collect();
            plurals.sort();
            let mut out = Vec::new();
            for group in &groups {
                for version in &versions {
                    for plural in &plurals {
                        out.push(Resource {
                            group: group.clone(),
                            version: version.clone(),
                            plural: plural.clone(),
                        });
                    }
                }
            }
            out
        })
        .collect()
}

/// The kinds found for `rules` (by `kind_of`, `None` for a resource not served), the first
/// [`MAX_KINDS`] found, without repeats, in group, version, kind order.
pub(crate) fn kinds(
    rules: &[Vec<Resource>],
    mut kind_of: impl FnMut(&Resource) -> Option<Kind>,
) -> Vec<Kind> {
    let mut kinds: Vec<Kind> = Vec::new();
    let mut found = 0;
    'rules: for rule in rules {
        for resource in rule {
            let Some(kind) = kind_of(resource) else {
                continue;
            };
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
            found += 1;
            if found == MAX_KINDS {
                break 'rules;
            }
        }
    }
    kinds.sort();
    kinds
}

/// The expressions checked, with their field paths: each validation's expression and, when set,
/// its message expression.
pub(crate) fn expressions(policy: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let validations = policy["spec"]["validations"].as_array();
    for (index, validation) in validations.into_iter().flatten().enumerate() {
        let field = format!("spec.validations[{index}]");
        let text = |key: &str| validation[key].as_str().unwrap_or_default().to_owned();
        out.push((format!("{field}.expression"), text("expression")));
        let message = text("messageExpression");
        if !message.is_empty() {
            out.push((format!("{field}.messageExpression"), message));
        }
    }
    out
}

/// The warning of one expression: each failing kind's issues, as v1.36 joins them; `None` when
/// every kind type-checks.
pub(crate) fn warning(failures: &[(Kind, String)]) -> Option<String> {
    if failures.is_empty() {
        return None;
    }
    let blocks: Vec<String> = failures
        .iter()
        .map(|(kind, issues)| format!("{}: {issues}\n", kind.go_string()))
        .collect();
    Some(blocks.join("\n"))
}

#[cfg(test)]
#[path = "typecheck_tests.rs"]
mod tests;
