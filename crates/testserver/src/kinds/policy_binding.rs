//! `ValidatingAdmissionPolicyBinding` and `MutatingAdmissionPolicyBinding`
//! (`pkg/registry/admissionregistration/{validating,mutating}admissionpolicybinding/strategy.go`,
//! checks from `pkg/apis/admissionregistration/validation/validation.go`): a binding says which
//! policy applies to which resources, with which parameters and, for a validating policy, what a
//! failed validation does (`validationActions`).
//!
//! A binding is accepted without its policy existing (v1.36 does the same: the pair is matched
//! when a request comes, and a binding whose policy is missing does nothing).
//!
//! # Differences from the real server
//! The selector and rule syntax inside `matchResources` and `paramRef.selector` is not checked.

use serde_json::{Map, Value, json};

use crate::kinds::admission_policy::{default_match_resources, text};
use crate::kinds::strategy::Strategy;
use crate::kinds::webhook_configuration::invalid_unless_empty;
use crate::status::{ApiError, Cause, cause};

/// The strategy of both binding kinds; `mutating` has no `validationActions`.
pub(crate) struct PolicyBindings {
    pub(crate) mutating: bool,
}

impl Strategy for PolicyBindings {
    fn prepare_for_create(&self, object: &mut Map<String, Value>) -> Result<(), ApiError> {
        self.prepare(object)
    }

    fn prepare_for_update(&self, object: &mut Map<String, Value>) -> Result<(), ApiError> {
        self.prepare(object)
    }
}

impl PolicyBindings {
    fn kind(&self) -> &'static str {
        if self.mutating {
            "MutatingAdmissionPolicyBinding"
        } else {
            "ValidatingAdmissionPolicyBinding"
        }
    }

    /// Defaults `matchResources`, then validates the spec.
    ///
    /// # Errors
    /// 422 Invalid with one cause per problem, in v1.36's order.
    fn prepare(&self, object: &mut Map<String, Value>) -> Result<(), ApiError> {
        let spec = object
            .entry("spec")
            .or_insert_with(|| json!({}))
            .as_object_mut();
        let causes = match spec {
            Some(spec) => {
                if let Some(resources) = spec
                    .get_mut("matchResources")
                    .and_then(Value::as_object_mut)
                {
                    default_match_resources(resources);
                }
                self.check(spec)
            }
            None => vec![cause("FieldValueRequired", "spec", "Required value")],
        };
        invalid_unless_empty(object, self.kind(), causes)
    }

    fn check(&self, spec: &Map<String, Value>) -> Vec<Cause> {
        let mut causes = Vec::new();
        let spec_value = Value::Object(spec.clone());
        if text(&spec_value, "policyName").is_empty() {
            causes.push(cause(
                "FieldValueRequired",
                "spec.policyName",
                "Required value",
            ));
        }
        if let Some(param_ref) = spec.get("paramRef") {
            causes.extend(check_param_ref(param_ref));
        }
        if !self.mutating {
            causes.extend(check_actions(spec.get("validationActions")));
        }
        causes
    }
}

/// `paramRef`: a name or a selector, never both, and what to do when nothing is found.
fn check_param_ref(param_ref: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let has_name = !text(param_ref, "name").is_empty();
    if has_name && param_ref.get("selector").is_some() {
        let why = "Forbidden: name and selector are mutually exclusive";
        causes.push(cause("FieldValueForbidden", "spec.paramRef.name", why));
        causes.push(cause("FieldValueForbidden", "spec.paramRef.selector", why));
    }
    let field = "spec.paramRef.parameterNotFoundAction";
    match text(param_ref, "parameterNotFoundAction") {
        "" => causes.push(cause("FieldValueRequired", field, "Required value")),
        "Allow" | "Deny" => {}
        other => causes.push(cause(
            "FieldValueNotSupported",
            field,
            format!(
                "Unsupported value: {}: supported values: \"Deny\", \"Allow\"",
                json!(other)
            ),
        )),
    }
    causes
}

/// `validationActions`: at least one, each once, each known.
fn check_actions(actions: Option<&Value>) -> Vec<Cause> {
    let actions = actions
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if actions.is_empty() {
        let why = "Required value: at least one validation action is required";
        return vec![cause("FieldValueRequired", "spec.validationActions", why)];
    }
    let mut causes = Vec::new();
    let mut seen = Vec::new();
    for (i, action) in actions.iter().enumerate() {
        let field = format!("spec.validationActions[{i}]");
        let action = action.as_str().unwrap_or("");
        if seen.contains(&action) {
            let why = format!("Duplicate value: {}", json!(action));
            causes.push(cause("FieldValueDuplicate", &field, why));
        } else if !matches!(action, "Audit" | "Deny" | "Warn") {
            causes.push(cause(
                "FieldValueNotSupported",
                &field,
                format!(
                    "Unsupported value: {}: supported values: \"Audit\", \"Deny\", \"Warn\"",
                    json!(action)
                ),
            ));
        }
        seen.push(action);
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn causes_of(mutating: bool, spec: Value) -> Vec<(String, String)> {
        let mut object = json!({"metadata": {"name": "b"}, "spec": spec});
        match (PolicyBindings { mutating }).prepare(object.as_object_mut().unwrap()) {
            Ok(()) => Vec::new(),
            Err(e) => e
                .details
                .causes
                .iter()
                .map(|c| (c.field.clone(), c.message.clone()))
                .collect(),
        }
    }

    #[test]
    fn binding_problems_are_named_as_v136_names_them() {
        let causes = causes_of(
            false,
            json!({"validationActions": ["Deny", "Deny", "Nope"], "paramRef": {"name": "a", "selector": {}}}),
        );
        let fields: Vec<&str> = causes.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.policyName",
                "spec.paramRef.name",
                "spec.paramRef.selector",
                "spec.paramRef.parameterNotFoundAction",
                "spec.validationActions[1]",
                "spec.validationActions[2]"
            ]
        );
        assert_eq!(causes[4].1, "Duplicate value: \"Deny\"");
        assert_eq!(
            causes[5].1,
            "Unsupported value: \"Nope\": supported values: \"Audit\", \"Deny\", \"Warn\""
        );
    }

    #[test]
    fn mutating_binding_needs_no_actions_and_match_resources_are_defaulted() {
        let mut object =
            json!({"metadata": {"name": "b"}, "spec": {"policyName": "p", "matchResources": {}}});
        (PolicyBindings { mutating: true })
            .prepare(object.as_object_mut().unwrap())
            .unwrap();
        assert_eq!(
            object["spec"]["matchResources"],
            json!({"matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {}})
        );
        assert_eq!(
            causes_of(false, json!({"policyName": "p"})),
            [(
                "spec.validationActions".to_string(),
                "Required value: at least one validation action is required".to_string()
            )]
        );
    }
}
