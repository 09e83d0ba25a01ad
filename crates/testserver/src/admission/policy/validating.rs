//! One ValidatingAdmissionPolicy with one binding, evaluated for one write (apiserver
//! `pkg/admission/plugin/policy/validating/{validator.go,dispatcher.go}`).
//!
//! Every validation of the policy is evaluated and each failure is a decision; the binding's
//! `validationActions` say what a decision does: `Deny` makes it the answer (the first denial
//! wins, as the dispatcher answers with its first denied decision), `Warn` a `Warning` header,
//! `Audit` nothing observable here. A binding that cannot be configured (its parameter missing
//! under `Deny`) and an audit annotation that fails to evaluate deny under `failurePolicy: Fail`
//! whatever the actions.

use serde_json::Value;

use crate::admission::policy::params::Params;
use crate::admission::policy::spec::{Bound, Env, Inputs, Policy, Subject, each_param};
use crate::status::{ApiError, Qualified};

/// A failed validation: the reason it is answered with and its message.
#[derive(Debug, PartialEq)]
pub(crate) struct Failure {
    pub(crate) reason: String,
    pub(crate) message: String,
}

impl Failure {
    fn invalid(message: String) -> Failure {
        Failure {
            reason: "Invalid".into(),
            message,
        }
    }
}

/// Evaluates `bound` for the write: warnings appended to `warnings`.
///
/// # Errors
/// The denial, worded as v1.36 words it.
pub(crate) fn run(
    subject: &Subject,
    bound: &Bound,
    inputs: &Inputs<'_>,
    warnings: &mut Vec<String>,
) -> Result<(), ApiError> {
    let policy = &bound.policy;
    let binding = &bound.binding.name;
    let deny = |failure: Failure| {
        let why = format!(
            "ValidatingAdmissionPolicy '{}' with binding '{binding}' denied request: {}",
            policy.name, failure.message
        );
        let what = Qualified {
            group: &subject.group,
            resource: &subject.resource,
        };
        ApiError::policy_denied(what, &subject.name, &failure.reason, &why)
    };
    match &bound.params {
        Params::Skip => return Ok(()),
        Params::Failed(_) if policy.ignore_failures => return Ok(()),
        Params::Failed(why) => {
            let message = format!("failed to configure binding: {why}");
            return Err(deny(Failure::invalid(message)));
        }
        Params::None | Params::Found(_) => {}
    }
    for param in each_param(&bound.params) {
        let env = Env::new(inputs, &param, subject);
        let found = failures(policy, env).map_err(deny)?;
        for failure in found {
            let actions = &bound.binding.validation_actions;
            if actions.iter().any(|a| a == "Warn") {
                let warning = format!(
                    "Validation failed for ValidatingAdmissionPolicy '{}' with binding '{binding}': {}",
                    policy.name, failure.message
                );
                // The request's warning recorder keeps one of identical warnings.
                if !warnings.contains(&warning) {
                    warnings.push(warning);
                }
            }
            if actions.iter().any(|a| a == "Deny") {
                return Err(deny(failure));
            }
        }
    }
    Ok(())
}

/// The failed validations of `policy` in `env` (none when a match condition is false).
///
/// # Errors
/// A failure that denies whatever the actions: an audit annotation that fails to evaluate
/// under `failurePolicy: Fail`.
fn failures(policy: &Policy, mut env: Env) -> Result<Vec<Failure>, Failure> {
    match env.conditions_hold(&policy.match_conditions) {
        Ok(true) => {}
        Ok(false) => return Ok(Vec::new()),
        Err(_) if policy.ignore_failures => return Ok(Vec::new()),
        Err(why) => return Ok(vec![Failure::invalid(why)]),
    }
    env.bind_variables(&policy.variables);
    let mut out = Vec::new();
    for validation in &policy.validations {
        let source = &validation.expression;
        match env.evaluate_bool(source) {
            Ok(true) => {}
            Ok(false) => out.push(Failure {
                reason: validation
                    .reason
                    .clone()
                    .unwrap_or_else(|| "Invalid".into()),
                message: message(&env, validation),
            }),
            Err(_) if policy.ignore_failures => {}
            Err(why) => out.push(Failure::invalid(format!(
                "expression '{source}' resulted in error: {why}"
            ))),
        }
    }
    for annotation in &policy.audit_annotations {
        let source = &annotation.value_expression;
        if let Err(why) = env.evaluate(source)
            && !policy.ignore_failures
        {
            return Err(Failure::invalid(format!(
                "valueExpression '{source}' resulted in error: {why}"
            )));
        }
    }
    Ok(out)
}

/// What a failed validation says: its `messageExpression`'s string when that gives a non-empty
/// one on a single line, else its `message`, else `failed expression: <e>`.
fn message(env: &Env, validation: &crate::admission::policy::spec::Validation) -> String {
    if !validation.message_expression.is_empty()
        && let Ok(Value::String(text)) = env.evaluate(&validation.message_expression)
        && !text.trim().is_empty()
        && !text.contains('\n')
    {
        return text;
    }
    if !validation.message.is_empty() {
        return validation.message.clone();
    }
    format!("failed expression: {}", validation.expression.trim())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::policy::spec::Validation;
    use serde_json::json;

    fn policy(spec: Value) -> Policy {
        Policy::from_stored(&json!({"metadata": {"name": "p"}, "spec": spec})).unwrap()
    }

    fn failures_for(spec: Value, object: Value) -> Result<Vec<Failure>, Failure> {
        let request = json!({});
        let inputs = Inputs {
            object: Some(&object),
            old: None,
            request: &request,
        };
        let env = Env::new(
            &inputs,
            &Value::Null,
            &crate::admission::policy::spec::subject(),
        );
        failures(&policy(spec), env)
    }

    #[test]
    fn messages_come_from_the_expression_then_the_message_then_the_rule() {
        let object = json!({"metadata": {"name": "x"}});
        let spec = json!({"validations": [
            {"expression": "false", "messageExpression": "'bad ' + object.metadata.name", "message": "m"},
            {"expression": "false", "messageExpression": "''", "message": "plain", "reason": "Forbidden"},
            {"expression": "1 == 2"},
            {"expression": "true"}]});
        let found = failures_for(spec, object).unwrap();
        let texts: Vec<(&str, &str)> = found
            .iter()
            .map(|f| (f.reason.as_str(), f.message.as_str()))
            .collect();
        assert_eq!(
            texts,
            [
                ("Invalid", "bad x"),
                ("Forbidden", "plain"),
                ("Invalid", "failed expression: 1 == 2")
            ]
        );
    }

    #[test]
    fn runtime_errors_fail_under_fail_and_vanish_under_ignore() {
        let object = json!({"metadata": {"name": "x"}});
        let rule = json!([{"expression": "object.data.k == 'v'"}]);
        let found = failures_for(json!({"validations": rule}), object.clone()).unwrap();
        assert_eq!(
            found,
            [Failure::invalid(
                "expression 'object.data.k == 'v'' resulted in error: no such key: data".into()
            )]
        );
        let ignored = json!({"failurePolicy": "Ignore", "validations": rule});
        assert_eq!(failures_for(ignored, object).unwrap(), []);
    }

    #[test]
    fn false_match_condition_skips_and_failing_audit_annotation_denies() {
        let object = json!({"metadata": {"name": "x"}});
        let skipped = json!({"matchConditions": [{"name": "c", "expression": "false"}],
                             "validations": [{"expression": "false"}]});
        assert_eq!(failures_for(skipped, object.clone()).unwrap(), []);
        let annotated =
            json!({"auditAnnotations": [{"key": "k", "valueExpression": "object.nope"}]});
        assert_eq!(
            failures_for(annotated, object).unwrap_err().message,
            "valueExpression 'object.nope' resulted in error: no such key: nope"
        );
    }

    #[test]
    fn multiline_message_expression_falls_back_to_message() {
        let object = json!({});
        let request = json!({});
        let inputs = Inputs {
            object: Some(&object),
            old: None,
            request: &request,
        };
        let env = Env::new(
            &inputs,
            &Value::Null,
            &crate::admission::policy::spec::subject(),
        );
        let validation = Validation {
            expression: "false".into(),
            message: "static".into(),
            message_expression: "'a\\nb'".into(),
            reason: None,
        };
        assert_eq!(message(&env, &validation), "static");
    }
}
