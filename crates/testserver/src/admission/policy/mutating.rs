//! One MutatingAdmissionPolicy with one binding, applied to one write (apiserver
//! `pkg/admission/plugin/policy/mutating/{dispatcher.go,patch/}`).
//!
//! The mutations run in order, each on the previous one's result: a `JSONPatch` expression
//! gives a list of `JSONPatch{op, path, value, from}` applied as RFC 6902; an
//! `ApplyConfiguration` expression gives an `Object{...}` merged into the object. Each
//! expression stops at v1.36's `PerCallLimit`, and each mutation has its own
//! `RuntimeCELCostBudget` (see [`crate::admission::policy::spec`]).
//!
//! # Differences from the real server
//! The real server merges an ApplyConfiguration with server-side apply's rules, typed by the
//! kind's schema (lists with keys merge by key); here maps merge field by field and a list in
//! the configuration replaces the object's list. Go's JSON Patch error texts are Rust's.

use kubegen_apiextensions::OBJECT_BUDGET;
use serde_json::{Map, Value};

use crate::admission::policy::params::Params;
use crate::admission::policy::spec::{Bound, Env, Inputs, Mutation, Subject, each_param};
use crate::status::{ApiError, Qualified};

/// Applies `bound` to `object`; whether it ran (its binding was not skipped and its match
/// conditions held for some parameter).
///
/// # Errors
/// 403 under `failurePolicy: Fail`, worded as v1.36 words it.
pub(crate) fn run(
    subject: &Subject,
    bound: &Bound,
    object: &mut Map<String, Value>,
    inputs: &Inputs<'_>,
) -> Result<bool, ApiError> {
    let policy = &bound.policy;
    let refuse = |reason: &'static str, why: String| {
        let message = format!(
            "policy '{}' with binding '{}' denied request: {why}",
            policy.name, bound.binding.name
        );
        let what = Qualified {
            group: &subject.group,
            resource: &subject.resource,
        };
        ApiError::mutation_denied(what, &subject.name, reason, &message)
    };
    match &bound.params {
        Params::Skip => return Ok(false),
        Params::Failed(_) if policy.ignore_failures => return Ok(false),
        Params::Failed(why) => {
            return Err(refuse(
                "Forbidden",
                format!("failed to configure binding: {why}"),
            ));
        }
        Params::None | Params::Found(_) => {}
    }
    let mut ran = false;
    for param in each_param(&bound.params) {
        let current = Value::Object(object.clone());
        let now = Inputs {
            object: Some(&current),
            ..*inputs
        };
        let mut env = Env::new(&now, &param, subject);
        match env.conditions_hold(&policy.match_conditions) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(_) if policy.ignore_failures => continue,
            Err(why) => return Err(refuse("Invalid", why)),
        }
        env.start_budget(OBJECT_BUDGET);
        env.bind_variables(&policy.variables);
        ran = true;
        for mutation in &policy.mutations {
            // Each mutation has a budget of its own (v1.36's `dispatcher.go`).
            env.start_budget(OBJECT_BUDGET);
            match apply(&mut env, mutation, object) {
                Ok(()) => {}
                Err(_) if policy.ignore_failures => {}
                Err(why) => return Err(refuse("Invalid", why)),
            }
        }
    }
    Ok(ran)
}

/// Applies one mutation to `object`, then lets `env` see the result as `object`.
///
/// # Errors
/// `expression '<e>' resulted in error: <why>`, or the patch's failure.
fn apply(
    env: &mut Env,
    mutation: &Mutation,
    object: &mut Map<String, Value>,
) -> Result<(), String> {
    let (holder, json_patch) = match mutation.patch_type.as_str() {
        "JSONPatch" => (mutation.json_patch.as_ref(), true),
        _ => (mutation.apply_configuration.as_ref(), false),
    };
    let Some(source) = holder.map(|h| h.expression.as_str()) else {
        return Ok(());
    };
    let expression = kubegen_apiextensions::Expression::compile_mutation(source)
        .map_err(|e| format!("expression '{source}' resulted in error: {e}"))?;
    let result = env
        .evaluate_compiled(&expression)
        .map_err(|why| format!("expression '{source}' resulted in error: {why}"))?;
    let mut target = Value::Object(std::mem::take(object));
    let outcome = if json_patch {
        patch(&mut target, result)
    } else {
        merge(&mut target, result);
        Ok(())
    };
    if let Value::Object(map) = target {
        *object = map;
    }
    env.set_object(Value::Object(object.clone()));
    outcome
}

/// Applies a JSONPatch expression's result (a list of operations) to `target`; on failure
/// `target` is left as it was.
fn patch(target: &mut Value, operations: Value) -> Result<(), String> {
    let operations: json_patch::Patch =
        serde_json::from_value(operations).map_err(|e| format!("JSONPatch: invalid patch: {e}"))?;
    let mut patched = target.clone();
    json_patch::patch(&mut patched, &operations).map_err(|e| format!("JSONPatch: {e}"))?;
    *target = patched;
    Ok(())
}

/// Merges an apply configuration into `target`: maps field by field, anything else replaced.
fn merge(target: &mut Value, configuration: Value) {
    match (target, configuration) {
        (Value::Object(into), Value::Object(from)) => {
            for (key, value) in from {
                match into.get_mut(&key) {
                    Some(existing) => merge(existing, value),
                    None => {
                        into.insert(key, value);
                    }
                }
            }
        }
        (target, value) => *target = value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn apply_configuration_merges_maps_and_replaces_lists() {
        let mut target =
            json!({"metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {"l": [1, 2]}});
        merge(
            &mut target,
            json!({"metadata": {"labels": {"y": "2"}}, "spec": {"l": [3]}}),
        );
        assert_eq!(
            target,
            json!({"metadata": {"name": "a", "labels": {"x": "1", "y": "2"}}, "spec": {"l": [3]}})
        );
    }

    #[test]
    fn json_patch_applies_all_or_nothing() {
        let mut target = json!({"a": 1});
        let ops =
            json!([{"op": "add", "path": "/b", "value": 2}, {"op": "remove", "path": "/nope"}]);
        assert!(patch(&mut target, ops).is_err());
        assert_eq!(target, json!({"a": 1}));
        let ops = json!([{"op": "add", "path": "/b", "value": 2}]);
        assert_eq!(patch(&mut target, ops), Ok(()));
        assert_eq!(target, json!({"a": 1, "b": 2}));
    }
}
