//! One ValidatingAdmissionPolicy with one binding, evaluated for one write (apiserver
//! `pkg/admission/plugin/policy/validating/{validator.go,dispatcher.go}`).
//!
//! Every validation of the policy is evaluated and each failure is a decision; the binding's
//! `validationActions` say what a decision does: `Deny` makes it a denial (the request is
//! answered with the first, after every policy ran, as the dispatcher does), `Warn` a `Warning`
//! header, `Audit` the `validation.policy.admission.k8s.io/validation_failure` annotation of
//! the request's audit event. The policy's `auditAnnotations` are evaluated too and their
//! values collected for [`PolicyAnnotations`]. A binding that cannot be configured (its parameter
//! missing under `Deny`) and an audit annotation that fails to evaluate (or gives neither a
//! string nor null) deny under `failurePolicy: Fail` whatever the actions. Expressions past
//! v1.36's cost limits fail as there (see [`crate::admission::policy::spec`]).
//!
//! # Differences from v1.36
//! A `messageExpression` is evaluated (and charged) only for a failed validation; v1.36
//! evaluates every validation's, and when they spend the budget it fails the passed
//! validations too.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::admission::policy::params::Params;
use kubegen_apiextensions::OBJECT_BUDGET;

use crate::admission::policy::spec::{
    Bound, Env, Inputs, OUT_OF_BUDGET, Policy, Subject, each_param,
};
use crate::audit::{RequestAudit, go_json};
use crate::status::{ApiError, Qualified};

/// The longest audit annotation value kept (the real dispatcher's 10 KiB).
const MAX_ANNOTATION_VALUE: usize = 10 * 1024;

/// A failed validation: the reason it is answered with, its message and which validation
/// (`expressionIndex` in the audit annotation).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Failure {
    pub(crate) reason: String,
    pub(crate) message: String,
    pub(crate) index: usize,
}

impl Failure {
    fn invalid(message: String) -> Failure {
        Failure {
            reason: "Invalid".into(),
            message,
            index: 0,
        }
    }
}

/// What one evaluation of a policy found.
#[derive(Debug, Default, PartialEq)]
struct Evaluated {
    failures: Vec<Failure>,
    /// `auditAnnotations` with a value to publish: key and value (trimmed, non-empty).
    annotations: Vec<(String, String)>,
    /// An audit annotation that failed under `failurePolicy: Fail`: a denial.
    annotation_error: Option<Failure>,
}

/// The `auditAnnotations` values of one policy's bindings, published as `<policy>/<key>`
/// once the policy's last binding ran (apiserver `auditAnnotationCollector`).
#[derive(Debug, Default)]
pub(crate) struct PolicyAnnotations {
    /// Per key, its distinct values in the order found.
    values: BTreeMap<String, Vec<String>>,
}

impl PolicyAnnotations {
    /// Adds values found by one binding; a value already there is not repeated.
    pub(crate) fn add(&mut self, found: Vec<(String, String)>) {
        for (key, value) in found {
            let values = self.values.entry(key).or_default();
            if !values.contains(&value) {
                values.push(value);
            }
        }
    }

    /// Adds `<policy>/<key>` annotations to `audit` (several values joined with `, `), and
    /// starts over for the next policy.
    pub(crate) fn publish(&mut self, policy: &str, audit: &RequestAudit) {
        for (key, values) in std::mem::take(&mut self.values) {
            audit.annotate(&format!("{policy}/{key}"), &values.join(", "));
        }
    }
}

/// The `validation.policy.admission.k8s.io/validation_failure` annotation's list entry, in the
/// real `ValidationFailureValue`'s field order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ValidationFailureValue<'a> {
    message: &'a str,
    policy: &'a str,
    binding: &'a str,
    expression_index: usize,
    validation_actions: &'a [String],
}

/// What one binding decided about a write.
pub(crate) struct Outcome {
    /// The binding's first denial, worded as v1.36 words it.
    pub(crate) denial: Option<ApiError>,
    /// The `auditAnnotations` values found: key and value.
    pub(crate) annotations: Vec<(String, String)>,
}

impl Outcome {
    fn admitted() -> Outcome {
        Outcome {
            denial: None,
            annotations: Vec::new(),
        }
    }
}

/// Evaluates `bound` for the write: warnings appended to `warnings`, `Audit` failures
/// annotated on the request's audit event.
pub(crate) fn run(
    subject: &Subject,
    bound: &Bound,
    inputs: &Inputs<'_>,
    warnings: &mut Vec<String>,
) -> Outcome {
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
        Params::Skip => return Outcome::admitted(),
        Params::Failed(_) if policy.ignore_failures => return Outcome::admitted(),
        Params::Failed(why) => {
            let message = format!("failed to configure binding: {why}");
            return Outcome {
                denial: Some(deny(Failure::invalid(message))),
                annotations: Vec::new(),
            };
        }
        Params::None | Params::Found(_) => {}
    }
    let actions = &bound.binding.validation_actions;
    let mut denial: Option<Failure> = None;
    let mut published = Vec::new();
    for param in each_param(&bound.params) {
        let env = Env::new(inputs, &param, subject);
        let evaluated = evaluate(policy, env);
        for failure in evaluated.failures {
            for action in actions {
                match action.as_str() {
                    "Deny" => {
                        denial.get_or_insert_with(|| failure.clone());
                    }
                    "Audit" => {
                        let value = go_json(&[ValidationFailureValue {
                            message: &failure.message,
                            policy: &policy.name,
                            binding,
                            expression_index: failure.index,
                            validation_actions: actions,
                        }]);
                        let key = "validation.policy.admission.k8s.io/validation_failure";
                        subject.audit.annotate(key, &value);
                    }
                    "Warn" => {
                        let warning = format!(
                            "Validation failed for ValidatingAdmissionPolicy '{}' with binding '{binding}': {}",
                            policy.name, failure.message
                        );
                        // The request's warning recorder keeps one of identical warnings.
                        if !warnings.contains(&warning) {
                            warnings.push(warning);
                        }
                    }
                    _ => {}
                }
            }
        }
        published.extend(evaluated.annotations);
        if let Some(error) = evaluated.annotation_error {
            denial.get_or_insert(error);
        }
    }
    Outcome {
        denial: denial.map(deny),
        annotations: published,
    }
}

/// The failed validations and audit annotations of `policy` in `env` (nothing when a match
/// condition is false). The validations, then their messages, share one runtime cost budget,
/// the audit annotations another; a spent budget is the evaluation's only failure (v1.36's
/// `validator.Validate`), or nothing under `failurePolicy: Ignore`.
fn evaluate(policy: &Policy, mut env: Env) -> Evaluated {
    match env.conditions_hold(&policy.match_conditions) {
        Ok(true) => {}
        Ok(false) => return Evaluated::default(),
        Err(_) if policy.ignore_failures => return Evaluated::default(),
        Err(why) => {
            return Evaluated {
                failures: vec![Failure::invalid(why)],
                ..Evaluated::default()
            };
        }
    }
    env.start_budget(OBJECT_BUDGET);
    env.bind_variables(&policy.variables);
    let mut results = Vec::with_capacity(policy.validations.len());
    for validation in &policy.validations {
        results.push(env.evaluate_bool(&validation.expression));
        if env.out_of_budget() {
            return out_of_budget(policy);
        }
    }
    let mut out = Evaluated::default();
    for (index, (validation, result)) in policy.validations.iter().zip(results).enumerate() {
        let source = &validation.expression;
        match result {
            Ok(true) => {}
            Ok(false) => {
                let message = message(&env, validation);
                if !env.out_of_budget() {
                    out.failures.push(Failure {
                        reason: validation
                            .reason
                            .clone()
                            .unwrap_or_else(|| "Invalid".into()),
                        message,
                        index,
                    });
                } else if !policy.ignore_failures {
                    out.failures.push(Failure {
                        index,
                        ..Failure::invalid(format!("failed messageExpression: {OUT_OF_BUDGET}"))
                    });
                }
            }
            Err(_) if policy.ignore_failures => {}
            Err(why) => out.failures.push(Failure {
                index,
                ..Failure::invalid(format!("expression '{source}' resulted in error: {why}"))
            }),
        }
    }
    env.start_budget(OBJECT_BUDGET);
    for annotation in &policy.audit_annotations {
        let source = &annotation.value_expression;
        let evaluated = env.evaluate(source);
        if env.out_of_budget() {
            return out_of_budget(policy);
        }
        let why = match evaluated {
            Ok(Value::Null) => continue,
            Ok(Value::String(text)) => {
                let value = cut(text.trim(), MAX_ANNOTATION_VALUE);
                if !value.is_empty() {
                    out.annotations
                        .push((annotation.key.clone(), value.to_string()));
                }
                continue;
            }
            // A value of another type denies whatever the failure policy.
            Ok(other) => {
                let message = format!(
                    "valueExpression '{source}' resulted in unsupported return type: {}. Return type must be either string or null.",
                    cel_type(&other)
                );
                out.annotation_error
                    .get_or_insert_with(|| Failure::invalid(message));
                continue;
            }
            Err(why) => why,
        };
        if !policy.ignore_failures {
            let message = format!("valueExpression '{source}' resulted in error: {why}");
            out.annotation_error
                .get_or_insert_with(|| Failure::invalid(message));
        }
    }
    out
}

/// A spent budget: the failure policy's answer alone.
fn out_of_budget(policy: &Policy) -> Evaluated {
    if policy.ignore_failures {
        return Evaluated::default();
    }
    Evaluated {
        failures: vec![Failure::invalid(OUT_OF_BUDGET.to_string())],
        ..Evaluated::default()
    }
}

/// `text` cut to at most `max` bytes, at a character boundary.
fn cut(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The CEL type name of a value, as an evaluation error names it.
fn cel_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null_type",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "double",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "map",
    }
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

    fn evaluate_for(spec: Value, object: Value) -> Evaluated {
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
        evaluate(&policy(spec), env)
    }

    fn failures_for(spec: Value, object: Value) -> Vec<Failure> {
        let evaluated = evaluate_for(spec, object);
        assert_eq!(evaluated.annotation_error, None);
        evaluated.failures
    }

    /// Compares every pair of `object.data`'s keys: about 630,000 for 300 keys, more than
    /// `PerCallLimit` for 1,000 (v1.36.2 answers as these tests expect for the same policies).
    const PAIRS: &str = "object.data.all(a, object.data.all(b, a != b || a == b))";

    fn config_map(keys: usize) -> Value {
        let data: serde_json::Map<String, Value> =
            (0..keys).map(|i| (format!("k{i}"), json!("v"))).collect();
        json!({"metadata": {"name": "x"}, "data": data})
    }

    #[test]
    fn an_expression_past_the_per_call_limit_fails_under_the_failure_policy() {
        let spec = json!({"validations": [{"expression": PAIRS}]});
        assert_eq!(
            failures_for(spec.clone(), config_map(1000)),
            vec![Failure::invalid(format!(
                "expression '{PAIRS}' resulted in error: operation cancelled: actual cost limit exceeded"
            ))]
        );
        assert_eq!(failures_for(spec.clone(), config_map(300)), vec![]);
        let mut ignored = spec;
        ignored["failurePolicy"] = json!("Ignore");
        assert_eq!(failures_for(ignored, config_map(1000)), vec![]);
    }

    #[test]
    fn validations_past_the_budget_are_one_failure() {
        let budget = Failure::invalid(OUT_OF_BUDGET.to_string());
        // Twenty validations of about 630,000 each spend 10,000,000; twelve do not.
        let failing = json!({"expression": "object.data.size() == 0"});
        let mut validations = vec![json!({"expression": PAIRS}); 20];
        validations.push(failing.clone());
        let spec = json!({"validations": validations});
        assert_eq!(
            failures_for(spec.clone(), config_map(300)),
            vec![budget.clone()]
        );
        let mut fitting = vec![json!({"expression": PAIRS}); 12];
        fitting.push(failing);
        let fits = failures_for(json!({"validations": fitting}), config_map(300));
        assert_eq!(fits.len(), 1);
        assert_eq!(fits[0].index, 12);
        let mut ignored = spec;
        ignored["failurePolicy"] = json!("Ignore");
        assert_eq!(failures_for(ignored, config_map(300)), vec![]);
        // The audit annotations have a budget of their own.
        let annotation = format!("{PAIRS} ? 'y' : 'n'");
        let annotated = json!({
            "validations": vec![json!({"expression": PAIRS}); 12],
            "auditAnnotations": vec![json!({"key": "k", "valueExpression": annotation}); 12],
        });
        let evaluated = evaluate_for(annotated, config_map(300));
        assert_eq!(evaluated.failures, vec![]);
        assert_eq!(evaluated.annotations.len(), 12);
    }

    #[test]
    fn match_conditions_past_their_budget_fail_even_beside_a_false_one() {
        let mut conditions = vec![json!({"name": "no", "expression": "false"})];
        conditions.extend((0..5).map(|i| json!({"name": format!("c{i}"), "expression": PAIRS})));
        let spec = json!({"matchConditions": conditions, "validations": [{"expression": "false"}]});
        assert_eq!(
            failures_for(spec.clone(), config_map(300)),
            vec![Failure::invalid(OUT_OF_BUDGET.to_string())]
        );
        let mut ignored = spec;
        ignored["failurePolicy"] = json!("Ignore");
        assert_eq!(evaluate_for(ignored, config_map(300)), Evaluated::default());
    }

    #[test]
    fn messages_come_from_the_expression_then_the_message_then_the_rule() {
        let object = json!({"metadata": {"name": "x"}});
        let spec = json!({"validations": [
            {"expression": "false", "messageExpression": "'bad ' + object.metadata.name", "message": "m"},
            {"expression": "false", "messageExpression": "''", "message": "plain", "reason": "Forbidden"},
            {"expression": "1 == 2"},
            {"expression": "true"}]});
        let found = failures_for(spec, object);
        let texts: Vec<(&str, &str, usize)> = found
            .iter()
            .map(|f| (f.reason.as_str(), f.message.as_str(), f.index))
            .collect();
        assert_eq!(
            texts,
            [
                ("Invalid", "bad x", 0),
                ("Forbidden", "plain", 1),
                ("Invalid", "failed expression: 1 == 2", 2)
            ]
        );
    }

    #[test]
    fn runtime_errors_fail_under_fail_and_vanish_under_ignore() {
        let object = json!({"metadata": {"name": "x"}});
        let rule = json!([{"expression": "object.data.k == 'v'"}]);
        let found = failures_for(json!({"validations": rule}), object.clone());
        assert_eq!(
            found,
            [Failure::invalid(
                "expression 'object.data.k == 'v'' resulted in error: no such key: data".into()
            )]
        );
        let ignored = json!({"failurePolicy": "Ignore", "validations": rule});
        assert_eq!(failures_for(ignored, object), []);
    }

    #[test]
    fn false_match_condition_skips_and_failing_audit_annotation_denies() {
        let object = json!({"metadata": {"name": "x"}});
        let skipped = json!({"matchConditions": [{"name": "c", "expression": "false"}],
                             "validations": [{"expression": "false"}]});
        assert_eq!(evaluate_for(skipped, object.clone()), Evaluated::default());
        let annotated =
            json!({"auditAnnotations": [{"key": "k", "valueExpression": "object.nope"}]});
        let error = evaluate_for(annotated, object).annotation_error.unwrap();
        assert_eq!(
            error.message,
            "valueExpression 'object.nope' resulted in error: no such key: nope"
        );
    }

    /// As v1.36 publishes them: strings trimmed, empty strings and null left out, another
    /// type a denial whatever the failure policy.
    #[test]
    fn audit_annotations_keep_strings_and_refuse_other_types() {
        let object = json!({"metadata": {"name": "x"}});
        let spec = json!({"failurePolicy": "Ignore", "auditAnnotations": [
            {"key": "a", "valueExpression": "' name-' + object.metadata.name + ' '"},
            {"key": "b", "valueExpression": "null"},
            {"key": "c", "valueExpression": "'  '"},
            {"key": "d", "valueExpression": "object.nope"}]});
        let evaluated = evaluate_for(spec, object.clone());
        assert_eq!(
            evaluated.annotations,
            [("a".to_string(), "name-x".to_string())]
        );
        assert_eq!(evaluated.annotation_error, None);
        let typed = json!({"failurePolicy": "Ignore",
            "auditAnnotations": [{"key": "n", "valueExpression": "1"}]});
        assert_eq!(
            evaluate_for(typed, object)
                .annotation_error
                .unwrap()
                .message,
            "valueExpression '1' resulted in unsupported return type: int. Return type must be either string or null."
        );
    }

    #[test]
    fn policy_annotations_join_distinct_values_under_the_policy_name() {
        let audit = crate::audit::RequestAudit::recording();
        let mut annotations = PolicyAnnotations::default();
        annotations.add(vec![("k".into(), "1".into())]);
        annotations.add(vec![("k".into(), "1".into()), ("k".into(), "2".into())]);
        annotations.publish("p", &audit);
        annotations.add(vec![("k".into(), "3".into())]);
        annotations.publish("q", &audit);
        let published = audit.annotations();
        assert_eq!(
            (published["p/k"].as_str(), published["q/k"].as_str()),
            ("1, 2", "3")
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
