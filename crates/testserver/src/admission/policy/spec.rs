//! A policy and a binding as the admission plugins read them from storage, and the CEL
//! environment one evaluation of a pair sees (`object`, `oldObject`, `request`, `params`,
//! `namespaceObject`, `variables`), shared by the validating and the mutating plugin
//! (apiserver `pkg/admission/plugin/policy/generic/interfaces.go`, `cel/composition.go`).
//!
//! Every expression is counted: one evaluation stops at v1.36's `PerCallLimit`, and the
//! expressions evaluated together spend one budget (`cel/activation.go`): the match conditions
//! `RuntimeCELCostBudgetMatchConditions` (`webhook/matchconditions/matcher.go`), the
//! validations `RuntimeCELCostBudget` and the audit annotations a fresh one
//! (`policy/validating/validator.go`). Past a budget the evaluation fails with
//! [`OUT_OF_BUDGET`] and nothing more is evaluated on it.
//!
//! # Differences from v1.36
//! Variables are evaluated (and charged) once, when bound, on the budget of the expressions
//! after them; v1.36 evaluates one the first time an expression reads it and charges that
//! expression.

use std::cell::Cell;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::admission::policy::matching::MatchResources;
use crate::admission::policy::params::{ParamKind, ParamRef, Params};
use crate::audit::RequestAudit;

/// v1.36's budget of a policy's match conditions (`RuntimeCELCostBudgetMatchConditions`).
pub(crate) const MATCH_CONDITIONS_BUDGET: i64 = 2_500_000;

/// v1.36's error when expressions spend more than their budget.
pub(crate) const OUT_OF_BUDGET: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";

/// The CEL inputs of one evaluation, besides `params` and `variables`.
pub(crate) struct Inputs<'a> {
    pub(crate) object: Option<&'a Value>,
    pub(crate) old: Option<&'a Value>,
    pub(crate) request: &'a Value,
}

/// What a write writes: the resource (`configmaps`, group `""`) and name its denials name, and
/// its namespace (`namespaceObject`, null for cluster-scoped writes).
pub(crate) struct Subject {
    pub(crate) group: String,
    pub(crate) resource: String,
    pub(crate) name: String,
    pub(crate) namespace: Value,
    /// `authorizer`, with its `requestResource`.
    pub(crate) authorizer: Value,
    /// The server's authorizer asked for the requesting user, behind `authorizer.check`.
    pub(crate) authorize: Option<kubegen_apiextensions::Authorize>,
    /// The request's audit event: `Audit` actions and `auditAnnotations` annotate it.
    pub(crate) audit: RequestAudit,
}

/// An expression with a name: a match condition or a variable.
#[derive(Clone, Debug, Default, Deserialize)]
pub(crate) struct NamedExpression {
    #[serde(default)]
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) expression: String,
}

/// One of a validating policy's `validations`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Validation {
    #[serde(default)]
    pub(crate) expression: String,
    #[serde(default)]
    pub(crate) message: String,
    #[serde(default)]
    pub(crate) message_expression: String,
    #[serde(default)]
    pub(crate) reason: Option<String>,
}

/// One of a validating policy's `auditAnnotations`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AuditAnnotation {
    /// The annotation is `<policy name>/<key>`.
    #[serde(default)]
    pub(crate) key: String,
    #[serde(default)]
    pub(crate) value_expression: String,
}

/// One of a mutating policy's `mutations`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Mutation {
    #[serde(default)]
    pub(crate) patch_type: String,
    #[serde(default)]
    pub(crate) json_patch: Option<ExpressionHolder>,
    #[serde(default)]
    pub(crate) apply_configuration: Option<ExpressionHolder>,
}

/// `{expression: ...}`.
#[derive(Clone, Debug, Default, Deserialize)]
pub(crate) struct ExpressionHolder {
    #[serde(default)]
    pub(crate) expression: String,
}

/// The spec of either policy kind (the fields of the other kind stay empty).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PolicySpec {
    #[serde(default)]
    param_kind: Option<ParamKind>,
    #[serde(default)]
    match_constraints: MatchResources,
    #[serde(default)]
    failure_policy: Option<String>,
    #[serde(default)]
    match_conditions: Vec<NamedExpression>,
    #[serde(default)]
    variables: Vec<NamedExpression>,
    #[serde(default)]
    validations: Vec<Validation>,
    #[serde(default)]
    audit_annotations: Vec<AuditAnnotation>,
    #[serde(default)]
    mutations: Vec<Mutation>,
    #[serde(default)]
    reinvocation_policy: Option<String>,
}

/// A stored policy.
#[derive(Clone, Debug)]
pub(crate) struct Policy {
    pub(crate) name: String,
    pub(crate) param_kind: Option<ParamKind>,
    pub(crate) constraints: MatchResources,
    /// `failurePolicy: Ignore` (the default, `Fail`, is false).
    pub(crate) ignore_failures: bool,
    pub(crate) match_conditions: Vec<NamedExpression>,
    pub(crate) variables: Vec<NamedExpression>,
    pub(crate) validations: Vec<Validation>,
    pub(crate) audit_annotations: Vec<AuditAnnotation>,
    pub(crate) mutations: Vec<Mutation>,
    reinvocation_policy: Option<String>,
}

impl Policy {
    /// The policy in a stored object; None for one that does not read as a policy (the
    /// strategy keeps those out, so only a hand-edited store has them).
    pub(crate) fn from_stored(object: &Value) -> Option<Policy> {
        let spec: PolicySpec = serde_json::from_value(object.get("spec")?.clone()).ok()?;
        Some(Policy {
            name: crate::object::meta_str(object, "name").to_string(),
            param_kind: spec.param_kind,
            constraints: spec.match_constraints,
            ignore_failures: spec.failure_policy.as_deref() == Some("Ignore"),
            match_conditions: spec.match_conditions,
            variables: spec.variables,
            validations: spec.validations,
            audit_annotations: spec.audit_annotations,
            mutations: spec.mutations,
            reinvocation_policy: spec.reinvocation_policy,
        })
    }

    /// `reinvocationPolicy: IfNeeded`.
    pub(crate) fn reinvokes(&self) -> bool {
        self.reinvocation_policy.as_deref() == Some("IfNeeded")
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BindingSpec {
    #[serde(default)]
    policy_name: String,
    #[serde(default)]
    param_ref: Option<ParamRef>,
    #[serde(default)]
    match_resources: Option<MatchResources>,
    #[serde(default)]
    validation_actions: Vec<String>,
}

/// A stored binding.
#[derive(Clone, Debug)]
pub(crate) struct Binding {
    pub(crate) name: String,
    pub(crate) policy_name: String,
    pub(crate) param_ref: Option<ParamRef>,
    pub(crate) match_resources: Option<MatchResources>,
    pub(crate) validation_actions: Vec<String>,
}

impl Binding {
    /// The binding in a stored object (see [`Policy::from_stored`]).
    pub(crate) fn from_stored(object: &Value) -> Option<Binding> {
        let spec: BindingSpec = serde_json::from_value(object.get("spec")?.clone()).ok()?;
        Some(Binding {
            name: crate::object::meta_str(object, "name").to_string(),
            policy_name: spec.policy_name,
            param_ref: spec.param_ref,
            match_resources: spec.match_resources,
            validation_actions: spec.validation_actions,
        })
    }
}

/// A policy with one of its bindings that matched a write, and the binding's parameters.
#[derive(Clone, Debug)]
pub(crate) struct Bound {
    pub(crate) policy: Policy,
    pub(crate) binding: Binding,
    pub(crate) params: Params,
    /// The version of the written resource the policy matched in (its `matchPolicy:
    /// Equivalent` may match a custom resource in another served version): a validating
    /// policy sees the objects in it.
    pub(crate) version: String,
}

/// The CEL variables of one evaluation of a pair with one parameter.
pub(crate) struct Env {
    values: Vec<(&'static str, Value)>,
    authorize: Option<kubegen_apiextensions::Authorize>,
    /// Variables that failed to evaluate, with why: an expression reading one fails with
    /// v1.36's `composited variable "<name>" fails to evaluate: <why>`.
    failed: Vec<(String, String)>,
    /// What is left of the budget the expressions evaluated now share; negative once spent.
    remaining: Cell<i64>,
}

impl Env {
    /// `object`, `oldObject`, `request`, `params`, `namespaceObject`, `authorizer`, and an
    /// empty `variables`.
    pub(crate) fn new(inputs: &Inputs<'_>, param: &Value, subject: &Subject) -> Env {
        let or_null = |v: Option<&Value>| v.cloned().unwrap_or(Value::Null);
        Env {
            values: vec![
                ("object", or_null(inputs.object)),
                ("oldObject", or_null(inputs.old)),
                ("request", inputs.request.clone()),
                ("params", param.clone()),
                ("namespaceObject", subject.namespace.clone()),
                ("authorizer", subject.authorizer.clone()),
                ("variables", Value::Object(Map::new())),
            ],
            authorize: subject.authorize.clone(),
            failed: Vec::new(),
            remaining: Cell::new(kubegen_apiextensions::OBJECT_BUDGET),
        }
    }

    /// Lets the expressions evaluated from now on share `budget`.
    pub(crate) fn start_budget(&self, budget: i64) {
        self.remaining.set(budget);
    }

    /// Whether an evaluation passed the budget (and so every later one fails).
    pub(crate) fn out_of_budget(&self) -> bool {
        self.remaining.get() < 0
    }

    /// Evaluates `source` to JSON.
    ///
    /// # Errors
    /// The parse or evaluation error's text.
    pub(crate) fn evaluate(&self, source: &str) -> Result<Value, String> {
        let expression =
            kubegen_apiextensions::Expression::compile(source).map_err(|e| e.to_string())?;
        self.evaluate_compiled(&expression)
    }

    /// Evaluates a compiled expression (a mutation's) to JSON, charging its cost to the budget.
    ///
    /// # Errors
    /// The evaluation error's text; [`OUT_OF_BUDGET`] once the budget is spent.
    pub(crate) fn evaluate_compiled(
        &self,
        expression: &kubegen_apiextensions::Expression,
    ) -> Result<Value, String> {
        if self.out_of_budget() {
            return Err(OUT_OF_BUDGET.to_string());
        }
        let bound: Vec<(&str, &Value)> = self.values.iter().map(|(k, v)| (*k, v)).collect();
        let authorize = self.authorize.clone();
        let evaluation = expression.evaluate_counted(&bound, authorize);
        // As v1.36, the cost is charged before the result is looked at, an error's too.
        let cost = i64::try_from(evaluation.cost).unwrap_or(i64::MAX);
        let left = self.remaining.get();
        if cost > left {
            self.remaining.set(-1);
            return Err(OUT_OF_BUDGET.to_string());
        }
        self.remaining.set(left - cost);
        evaluation.result.map_err(|why| {
            let failed = self
                .failed
                .iter()
                .find(|(name, _)| why == format!("no such key: {name}"));
            match failed {
                Some((name, cause)) => {
                    format!("composited variable \"{name}\" fails to evaluate: {cause}")
                }
                None => why,
            }
        })
    }

    /// Replaces `object` (a mutation's result is the next one's input).
    pub(crate) fn set_object(&mut self, object: Value) {
        if let Some((_, value)) = self.values.iter_mut().find(|(k, _)| *k == "object") {
            *value = object;
        }
    }

    /// Evaluates `source`, which must give a bool.
    ///
    /// # Errors
    /// The evaluation error's text, or a note that the result is not a bool.
    pub(crate) fn evaluate_bool(&self, source: &str) -> Result<bool, String> {
        match self.evaluate(source)? {
            Value::Bool(b) => Ok(b),
            other => Err(format!("expected a bool, got {other}")),
        }
    }

    /// Evaluates the policy's `variables` in order, each seeing the earlier ones; one that
    /// fails is left out, and remembered for the error of an expression that reads it.
    pub(crate) fn bind_variables(&mut self, variables: &[NamedExpression]) {
        for variable in variables {
            match self.evaluate(&variable.expression) {
                Ok(value) => {
                    if let Some((_, Value::Object(map))) =
                        self.values.iter_mut().find(|(k, _)| *k == "variables")
                    {
                        map.insert(variable.name.clone(), value);
                    }
                }
                Err(why) => self.failed.push((variable.name.clone(), why)),
            }
        }
    }

    /// Whether every match condition holds: false when one is false. All are evaluated first,
    /// sharing [`MATCH_CONDITIONS_BUDGET`], and a spent budget wins over a false condition
    /// (v1.36's matcher looks at the results only once the filter ran them all).
    ///
    /// # Errors
    /// `expression '<e>' resulted in error: <why>` (several joined as an aggregate) when none
    /// is false but some failed; [`OUT_OF_BUDGET`] when they spent their budget.
    pub(crate) fn conditions_hold(&self, conditions: &[NamedExpression]) -> Result<bool, String> {
        self.start_budget(MATCH_CONDITIONS_BUDGET);
        let mut results = Vec::with_capacity(conditions.len());
        for condition in conditions {
            results.push(self.evaluate_bool(&condition.expression));
            if self.out_of_budget() {
                return Err(OUT_OF_BUDGET.to_string());
            }
        }
        let mut failed = Vec::new();
        for (condition, result) in conditions.iter().zip(results) {
            let source = &condition.expression;
            match result {
                Ok(true) => {}
                Ok(false) => return Ok(false),
                Err(why) => failed.push(format!("expression '{source}' resulted in error: {why}")),
            }
        }
        match failed.len() {
            0 => Ok(true),
            1 => Err(failed.remove(0)),
            _ => Err(format!("[{}]", failed.join(", "))),
        }
    }
}

/// The parameters a pair is evaluated with: null once, or each object found.
pub(crate) fn each_param(params: &Params) -> Vec<Value> {
    match params {
        Params::Found(found) => found.clone(),
        _ => vec![Value::Null],
    }
}

/// A subject for unit tests: `configmaps "x"`, no namespace, an authorizer allowing `get`.
#[cfg(test)]
pub(crate) fn subject() -> Subject {
    let authorize: kubegen_apiextensions::Authorize =
        std::sync::Arc::new(|check| (check.verb == "get", String::new()));
    Subject {
        group: String::new(),
        resource: "configmaps".into(),
        name: "x".into(),
        namespace: Value::Null,
        authorizer: kubegen_apiextensions::authorizer_value(["", "configmaps", "", "", "x"]),
        authorize: Some(authorize),
        audit: RequestAudit::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(object: Value) -> Env {
        let request = json!({"operation": "CREATE"});
        let inputs = Inputs {
            object: Some(&object),
            old: None,
            request: &request,
        };
        Env::new(&inputs, &json!({"data": {"max": 3}}), &subject())
    }

    #[test]
    fn variables_see_the_earlier_ones_and_failures_are_left_out() {
        let mut env = env(json!({"metadata": {"name": "a"}}));
        let named = |name: &str, expression: &str| NamedExpression {
            name: name.into(),
            expression: expression.into(),
        };
        env.bind_variables(&[
            named("n", "object.metadata.name"),
            named("twice", "variables.n + variables.n"),
            named("broken", "object.spec.x"),
        ]);
        assert_eq!(env.evaluate("variables.twice"), Ok(json!("aa")));
        assert_eq!(
            env.evaluate("variables.broken == 1"),
            Err("composited variable \"broken\" fails to evaluate: no such key: spec".into())
        );
        assert_eq!(env.evaluate("params.data.max + 1"), Ok(json!(4)));
        assert_eq!(env.evaluate_bool("oldObject == null"), Ok(true));
        assert_eq!(
            env.evaluate_bool("authorizer.requestResource.check('get').allowed()"),
            Ok(true)
        );
        assert_eq!(
            env.evaluate_bool("authorizer.group('').resource('secrets').check('list').allowed()"),
            Ok(false)
        );
    }

    #[test]
    fn a_false_condition_wins_over_a_failing_one() {
        let env = env(json!({"metadata": {"name": "a"}}));
        let cond = |e: &str| NamedExpression {
            name: "c".into(),
            expression: e.into(),
        };
        assert_eq!(
            env.conditions_hold(&[cond("object.nope == 1"), cond("false")]),
            Ok(false)
        );
        assert_eq!(
            env.conditions_hold(&[cond("object.nope == 1"), cond("true")]),
            Err("expression 'object.nope == 1' resulted in error: no such key: nope".into())
        );
        assert_eq!(env.conditions_hold(&[]), Ok(true));
    }
}
