//! `ValidatingAdmissionPolicy` and `MutatingAdmissionPolicy`
//! (`pkg/registry/admissionregistration/{validating,mutating}admissionpolicy/strategy.go`,
//! defaults from `pkg/apis/admissionregistration/v1/defaults.go`, checks from
//! `pkg/apis/admissionregistration/validation/validation.go`): the policies the admission chain
//! (`crate::admission::policy`) evaluates on every write they match.
//!
//! Why the checks matter here: a policy the real server refuses must be refused here too, or a
//! test passes against the test server with a manifest a cluster rejects. The defaults are what
//! v1.36 stores (`failurePolicy: Fail`, `matchPolicy: Equivalent`, empty selectors, a rule's
//! `scope: "*"`), so that a client reading a policy back sees the same object. A new
//! ValidatingAdmissionPolicy gets `status: {}`, as v1.36 stores it.
//!
//! # Differences from the real server
//! Expressions are type-checked (`policy_types`) with what the checker can type: a field of
//! `request` or `namespaceObject` that does not exist, a wrong overload, a validation that is no
//! bool or a message expression that is no string are refused with v1.36's message. Where the
//! checker falls back to `dyn`, only the errors visible in the syntax are found: a validation or
//! match condition that is a field or index of the untyped `object`, `oldObject` or `params` (or
//! a variable that is), `must evaluate to bool but got dyn`; `variables` in a match condition
//! and `authorizer` in a message expression, `undeclared reference`. Mutations are parsed only.
//! Parse errors are worded by kubegen's CEL parser after v1.36's `compilation failed: ` prefix.
//! `status.typeChecking`, typed by the matched kinds' schemas, is written afterwards by the
//! controller-manager's `validatingadmissionpolicy-status-controller`, as on a cluster.

use kubegen_apiextensions::PolicyScope;
use serde_json::{Map, Value, json};

use crate::kinds::policy_types::{scope_before, scope_of, type_causes};
use crate::kinds::strategy::Strategy;
use crate::kinds::webhook_configuration::{check_match_conditions, invalid_unless_empty};
use crate::status::{ApiError, Cause, cause};

/// The strategy of both policy kinds; `mutating` picks MutatingAdmissionPolicy's fields.
pub(crate) struct AdmissionPolicies {
    pub(crate) mutating: bool,
}

impl Strategy for AdmissionPolicies {
    fn prepare_for_create(&self, object: &mut Map<String, Value>) -> Result<(), ApiError> {
        if !self.mutating {
            object.insert("status".into(), json!({}));
        }
        self.prepare(object)
    }

    fn prepare_for_update(&self, object: &mut Map<String, Value>) -> Result<(), ApiError> {
        self.prepare(object)
    }
}

impl AdmissionPolicies {
    fn kind(&self) -> &'static str {
        if self.mutating {
            "MutatingAdmissionPolicy"
        } else {
            "ValidatingAdmissionPolicy"
        }
    }

    /// Defaults the spec, then validates it.
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
                default_policy(spec);
                if self.mutating {
                    check_mutating(spec)
                } else {
                    check_validating(spec)
                }
            }
            None => vec![cause("FieldValueRequired", "spec", "Required value")],
        };
        invalid_unless_empty(object, self.kind(), causes)
    }
}

/// `SetDefaults_ValidatingAdmissionPolicySpec` / `..._MutatingAdmissionPolicySpec`.
fn default_policy(spec: &mut Map<String, Value>) {
    spec.entry("failurePolicy").or_insert(json!("Fail"));
    if let Some(constraints) = spec
        .get_mut("matchConstraints")
        .and_then(Value::as_object_mut)
    {
        default_match_resources(constraints);
    }
}

/// `SetDefaults_MatchResources`: the match policy, empty selectors, every rule's scope.
pub(crate) fn default_match_resources(resources: &mut Map<String, Value>) {
    resources
        .entry("matchPolicy")
        .or_insert(json!("Equivalent"));
    resources.entry("namespaceSelector").or_insert(json!({}));
    resources.entry("objectSelector").or_insert(json!({}));
    for list in ["resourceRules", "excludeResourceRules"] {
        if let Some(rules) = resources.get_mut(list).and_then(Value::as_array_mut) {
            for rule in rules.iter_mut().filter_map(Value::as_object_mut) {
                rule.entry("scope").or_insert(json!("*"));
            }
        }
    }
}

/// `validateValidatingAdmissionPolicySpec`.
fn check_validating(spec: &Map<String, Value>) -> Vec<Cause> {
    let mut causes = check_common(spec);
    let validations = spec.get("validations").and_then(Value::as_array);
    let annotations = spec.get("auditAnnotations").and_then(Value::as_array);
    if validations.is_none_or(Vec::is_empty) && annotations.is_none_or(Vec::is_empty) {
        let why = "Required value: validations or auditAnnotations must contain at least one item";
        causes.push(cause("FieldValueRequired", "spec.validations", why));
        causes.push(cause("FieldValueRequired", "spec.auditAnnotations", why));
    }
    let dyn_variables = dyn_variables(spec);
    let scope = scope_of(spec);
    for (i, validation) in validations.into_iter().flatten().enumerate() {
        let at = format!("spec.validations[{i}]");
        causes.extend(check_validation(validation, &at, &dyn_variables, &scope));
    }
    for (i, annotation) in annotations.into_iter().flatten().enumerate() {
        let at = format!("spec.auditAnnotations[{i}]");
        if text(annotation, "key").is_empty() {
            causes.push(cause(
                "FieldValueRequired",
                &format!("{at}.key"),
                "Required value",
            ));
        }
        let field = format!("{at}.valueExpression");
        let source = text(annotation, "valueExpression");
        let found = check_expression(source, &field);
        if found.is_empty() {
            causes.extend(type_causes(
                source,
                &field,
                &scope,
                &["string", "null_type"],
            ));
        }
        causes.extend(found);
    }
    causes
}

/// The checks both policy kinds share: failure policy, constraints, param kind, match
/// conditions, variables (in v1.36's order).
fn check_common(spec: &Map<String, Value>) -> Vec<Cause> {
    let mut causes = Vec::new();
    let failure = spec.get("failurePolicy").and_then(Value::as_str);
    if let Some(other) = failure.filter(|f| !matches!(*f, "Fail" | "Ignore")) {
        causes.push(cause(
            "FieldValueNotSupported",
            "spec.failurePolicy",
            format!(
                "Unsupported value: {}: supported values: \"Fail\", \"Ignore\"",
                json!(other)
            ),
        ));
    }
    if let Some(param_kind) = spec.get("paramKind") {
        for field in ["apiVersion", "kind"] {
            if text(param_kind, field).is_empty() {
                let at = format!("spec.paramKind.{field}");
                causes.push(cause("FieldValueRequired", &at, "Required value"));
            }
        }
    }
    match spec.get("matchConstraints").and_then(Value::as_object) {
        None => causes.push(cause(
            "FieldValueRequired",
            "spec.matchConstraints",
            "Required value",
        )),
        Some(constraints) => {
            let rules = constraints.get("resourceRules").and_then(Value::as_array);
            if rules.is_none_or(Vec::is_empty) {
                let field = "spec.matchConstraints.resourceRules";
                causes.push(cause("FieldValueRequired", field, "Required value"));
            }
        }
    }
    causes.extend(check_match_conditions(spec, "spec"));
    causes.extend(check_condition_types(spec));
    causes.extend(check_variables(spec));
    causes
}

/// What v1.36's checker says of match conditions the parser accepts: `variables` is not
/// declared there, and a condition must give a bool.
fn check_condition_types(spec: &Map<String, Value>) -> Vec<Cause> {
    let conditions = spec.get("matchConditions").and_then(Value::as_array);
    let mut causes = Vec::new();
    let scope = PolicyScope {
        variables: None,
        ..scope_of(spec)
    };
    for (i, condition) in conditions.into_iter().flatten().enumerate() {
        let source = text(condition, "expression");
        let field = format!("spec.matchConditions[{i}].expression");
        let Ok(expression) = kubegen_apiextensions::Expression::compile(source) else {
            continue;
        };
        if let Some(cause) = undeclared(source, "variables", &field) {
            causes.push(cause);
        } else if expression.is_dyn(&[]) {
            causes.push(not_bool(source, &field));
        } else {
            causes.extend(type_causes(source, &field, &scope, &["bool"]));
        }
    }
    causes
}

/// The names of `spec.variables` whose value is provably `dyn`, in order (each may read the
/// earlier ones).
fn dyn_variables(spec: &Map<String, Value>) -> Vec<String> {
    let variables = spec.get("variables").and_then(Value::as_array);
    let mut names = Vec::new();
    for variable in variables.into_iter().flatten() {
        let compiled = kubegen_apiextensions::Expression::compile(text(variable, "expression"));
        if compiled.is_ok_and(|e| e.is_dyn(&names)) {
            names.push(text(variable, "name").to_string());
        }
    }
    names
}

/// `must evaluate to bool but got dyn`, v1.36's complaint about an untyped result.
fn not_bool(source: &str, field: &str) -> Cause {
    cause(
        "FieldValueInvalid",
        field,
        format!(
            "Invalid value: {}: must evaluate to bool but got dyn",
            json!(source)
        ),
    )
}

/// cel-go's `undeclared reference` for `name` standing as an identifier of its own in
/// `source`, where the environment does not declare it.
fn undeclared(source: &str, name: &str, field: &str) -> Option<Cause> {
    let column = identifier_column(source, name)?;
    Some(cause(
        "FieldValueInvalid",
        field,
        format!(
            "Invalid value: {}: compilation failed: ERROR: <input>:1:{column}: undeclared reference to '{name}' (in container '')\n | {source}\n | {}^",
            json!(source),
            ".".repeat(column - 1)
        ),
    ))
}

fn check_variables(spec: &Map<String, Value>) -> Vec<Cause> {
    let variables = spec.get("variables").and_then(Value::as_array);
    let mut causes = Vec::new();
    let scope = scope_of(spec);
    for (i, variable) in variables.into_iter().flatten().enumerate() {
        let at = format!("spec.variables[{i}]");
        let name = text(variable, "name");
        if name.is_empty() {
            causes.push(cause(
                "FieldValueRequired",
                &format!("{at}.name"),
                "Required value",
            ));
        } else if !is_cel_identifier(name) {
            causes.push(cause(
                "FieldValueInvalid",
                &format!("{at}.name"),
                format!(
                    "Invalid value: {}: must be a valid CEL identifier",
                    json!(name)
                ),
            ));
        }
        let (source, field) = (text(variable, "expression"), format!("{at}.expression"));
        let found = check_expression(source, &field);
        if found.is_empty() {
            causes.extend(type_causes(source, &field, &scope_before(&scope, i), &[]));
        }
        causes.extend(found);
    }
    causes
}

/// One of `spec.validations`: an expression giving a bool (as far as is known without types,
/// see [`kubegen_apiextensions::Expression::is_dyn`]), an optional message expression, a known
/// reason.
fn check_validation(
    validation: &Value,
    at: &str,
    dyn_variables: &[String],
    scope: &PolicyScope,
) -> Vec<Cause> {
    let source = text(validation, "expression");
    let field = format!("{at}.expression");
    let mut causes = check_expression(source, &field);
    let compiled = kubegen_apiextensions::Expression::compile(source);
    if causes.is_empty() && compiled.is_ok_and(|e| e.is_dyn(dyn_variables)) {
        causes.push(not_bool(source, &field));
    } else if causes.is_empty() {
        causes.extend(type_causes(source, &field, scope, &["bool"]));
    }
    let message = validation.get("messageExpression").and_then(Value::as_str);
    if let Some(source) = message.filter(|s| !s.trim().is_empty()) {
        let field = format!("{at}.messageExpression");
        let mut found = check_expression(source, &field);
        if found.is_empty() {
            found.extend(undeclared(source, "authorizer", &field));
        }
        if found.is_empty() {
            let scope = PolicyScope {
                authorizer: false,
                ..scope.clone()
            };
            found.extend(type_causes(source, &field, &scope, &["string"]));
        }
        causes.extend(found);
    }
    const REASONS: [&str; 3] = ["Forbidden", "Invalid", "RequestEntityTooLarge"];
    if let Some(reason) = validation.get("reason").and_then(Value::as_str)
        && !REASONS.contains(&reason)
    {
        causes.push(cause(
            "FieldValueNotSupported",
            &format!("{at}.reason"),
            format!(
                "Unsupported value: {}: supported values: \"Forbidden\", \"Invalid\", \"RequestEntityTooLarge\"",
                json!(reason)
            ),
        ));
    }
    causes
}

/// `validateMutatingAdmissionPolicySpec`.
fn check_mutating(spec: &Map<String, Value>) -> Vec<Cause> {
    let mut causes = check_common(spec);
    let mutations = spec.get("mutations").and_then(Value::as_array);
    if mutations.is_none_or(Vec::is_empty) {
        causes.push(cause(
            "FieldValueRequired",
            "spec.mutations",
            "Required value",
        ));
    }
    for (i, mutation) in mutations.into_iter().flatten().enumerate() {
        causes.extend(check_mutation(mutation, &format!("spec.mutations[{i}]")));
    }
    match spec.get("reinvocationPolicy").and_then(Value::as_str) {
        None | Some("") => causes.push(cause(
            "FieldValueRequired",
            "spec.reinvocationPolicy",
            "Required value",
        )),
        Some("Never" | "IfNeeded") => {}
        Some(other) => causes.push(cause(
            "FieldValueNotSupported",
            "spec.reinvocationPolicy",
            format!(
                "Unsupported value: {}: supported values: \"IfNeeded\", \"Never\"",
                json!(other)
            ),
        )),
    }
    causes
}

/// One of `spec.mutations`: a known patch type with its expression.
fn check_mutation(mutation: &Value, at: &str) -> Vec<Cause> {
    let patch_type = text(mutation, "patchType");
    let field = match patch_type {
        "JSONPatch" => "jsonPatch",
        "ApplyConfiguration" => "applyConfiguration",
        "" => {
            return vec![cause(
                "FieldValueRequired",
                &format!("{at}.patchType"),
                "Required value",
            )];
        }
        other => {
            return vec![cause(
                "FieldValueNotSupported",
                &format!("{at}.patchType"),
                format!(
                    "Unsupported value: {}: supported values: \"ApplyConfiguration\", \"JSONPatch\"",
                    json!(other)
                ),
            )];
        }
    };
    let Some(body) = mutation.get(field) else {
        return vec![cause(
            "FieldValueRequired",
            &format!("{at}.{field}"),
            format!("Required value: must be specified when patchType is {patch_type}"),
        )];
    };
    check_expression(
        text(body, "expression"),
        &format!("{at}.{field}.expression"),
    )
}

/// A required expression that must parse.
pub(crate) fn check_expression(source: &str, field: &str) -> Vec<Cause> {
    if source.trim().is_empty() {
        return vec![cause(
            "FieldValueRequired",
            field,
            "Required value: expression is not specified",
        )];
    }
    match kubegen_apiextensions::Expression::compile(source) {
        Ok(_) => Vec::new(),
        Err(error) => vec![cause(
            "FieldValueInvalid",
            field,
            format!(
                "Invalid value: {}: compilation failed: {error}",
                json!(source)
            ),
        )],
    }
}

/// The 1-based column where `name` first stands as an identifier of its own in a one-line
/// `source` (v1.36 declares no `authorizer` for message expressions, so naming it there does not
/// compile).
fn identifier_column(source: &str, name: &str) -> Option<usize> {
    if source.contains('\n') {
        return None;
    }
    let is_ident = |c: char| c == '_' || c == '.' || c.is_ascii_alphanumeric();
    source.match_indices(name).find_map(|(at, _)| {
        let before = source[..at].chars().next_back();
        let after = source[at + name.len()..].chars().next();
        let alone =
            before.is_none_or(|c| !is_ident(c)) && after.is_none_or(|c| !is_ident(c) || c == '.');
        alone.then_some(at + 1)
    })
}

/// A string field of `value`, empty when absent.
pub(crate) fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

/// CEL's identifier syntax (`[_a-zA-Z][_a-zA-Z0-9]*`), which variable names must follow.
fn is_cel_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn causes_of(mutating: bool, spec: Value) -> Vec<(String, String)> {
        let mut object = json!({"metadata": {"name": "p"}, "spec": spec});
        let object = object.as_object_mut().unwrap();
        match (AdmissionPolicies { mutating }).prepare(object) {
            Ok(()) => Vec::new(),
            Err(e) => e
                .details
                .causes
                .iter()
                .map(|c| (c.field.clone(), c.message.clone()))
                .collect(),
        }
    }

    /// Answers of v1.36 to ValidatingAdmissionPolicies with these expressions (recorded there
    /// one policy at a time).
    #[test]
    fn type_errors_are_refused_as_v136_refuses_them() {
        let constraints = json!({"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
            "operations": ["CREATE"], "resources": ["deployments"]}]});
        let first = |spec: Value| {
            let mut spec = spec;
            spec["matchConstraints"] = constraints.clone();
            causes_of(false, spec).into_iter().next()
        };
        let one = |field: &str, message: &str| Some((field.to_string(), message.to_string()));
        assert_eq!(
            first(json!({"validations": [{"expression": "1 > 'x'"}]})),
            one(
                "spec.validations[0].expression",
                "Invalid value: \"1 > 'x'\": compilation failed: ERROR: <input>:1:3: found no matching overload for '_>_' applied to '(int, string)'\n | 1 > 'x'\n | ..^"
            )
        );
        assert_eq!(
            first(json!({"validations": [{"expression": "'a'"}]})),
            one(
                "spec.validations[0].expression",
                "Invalid value: \"'a'\": must evaluate to bool but got string"
            )
        );
        assert_eq!(
            first(json!({"validations": [{"expression": "true", "messageExpression": "1"}]})),
            one(
                "spec.validations[0].messageExpression",
                "Invalid value: \"1\": must evaluate to string but got int"
            )
        );
        assert_eq!(
            first(
                json!({"validations": [{"expression": "true", "messageExpression": "request.nosuch"}]})
            ),
            one(
                "spec.validations[0].messageExpression",
                "Invalid value: \"request.nosuch\": compilation failed: ERROR: <input>:1:8: undefined field 'nosuch'\n | request.nosuch\n | .......^"
            )
        );
        assert_eq!(
            first(
                json!({"matchConditions": [{"name": "a", "expression": "request.name"}],
                         "validations": [{"expression": "true"}]})
            ),
            one(
                "spec.matchConditions[0].expression",
                "Invalid value: \"request.name\": must evaluate to bool but got string"
            )
        );
        assert_eq!(
            first(
                json!({"variables": [{"name": "a", "expression": "1 + \"a\""}],
                         "validations": [{"expression": "true"}]})
            ),
            one(
                "spec.variables[0].expression",
                "Invalid value: \"1 + \\\"a\\\"\": compilation failed: ERROR: <input>:1:3: found no matching overload for '_+_' applied to '(int, string)'\n | 1 + \"a\"\n | ..^"
            )
        );
        assert_eq!(
            first(json!({"variables": [{"name": "a", "expression": "1"}],
                         "validations": [{"expression": "variables.b == 1"}]})),
            one(
                "spec.validations[0].expression",
                "Invalid value: \"variables.b == 1\": compilation failed: ERROR: <input>:1:10: undefined field 'b'\n | variables.b == 1\n | .........^"
            )
        );
        assert_eq!(
            first(json!({"validations": [{"expression": "params.x == 1"}]})),
            one(
                "spec.validations[0].expression",
                "Invalid value: \"params.x == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^"
            )
        );
        assert_eq!(
            first(json!({"validations": [{"expression": "true"}],
                         "auditAnnotations": [{"key": "a", "valueExpression": "1"}]})),
            one(
                "spec.auditAnnotations[0].valueExpression",
                "Invalid value: \"1\": must evaluate to one of [string null_type] but got int"
            )
        );
        assert_eq!(
            first(json!({"validations": [{"expression": "object.spec.replicas > 1"}]})),
            None
        );
    }

    #[test]
    fn validating_policy_defaults_as_v136_stores_it() {
        let mut object = json!({"metadata": {"name": "p"}, "spec": {
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}]},
            "validations": [{"expression": "true"}]}});
        let policies = AdmissionPolicies { mutating: false };
        policies
            .prepare_for_create(object.as_object_mut().unwrap())
            .unwrap();
        assert_eq!(object["status"], json!({}));
        assert_eq!(object["spec"]["failurePolicy"], "Fail");
        let constraints = &object["spec"]["matchConstraints"];
        assert_eq!(constraints["matchPolicy"], "Equivalent");
        assert_eq!(constraints["namespaceSelector"], json!({}));
        assert_eq!(constraints["objectSelector"], json!({}));
        assert_eq!(constraints["resourceRules"][0]["scope"], "*");
    }

    #[test]
    fn empty_validating_policy_names_the_fields_v136_names() {
        let causes = causes_of(false, json!({}));
        let fields: Vec<&str> = causes.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.matchConstraints",
                "spec.validations",
                "spec.auditAnnotations"
            ]
        );
        assert_eq!(
            causes[1].1,
            "Required value: validations or auditAnnotations must contain at least one item"
        );
    }

    #[test]
    fn bad_values_are_reported_per_field() {
        let causes = causes_of(
            false,
            json!({"failurePolicy": "Maybe",
                   "variables": [{"name": "1x", "expression": "true"}],
                   "validations": [{"expression": ""}, {"expression": "1 +"}, {"expression": "true", "reason": "Nope"}]}),
        );
        let fields: Vec<&str> = causes.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.failurePolicy",
                "spec.matchConstraints",
                "spec.variables[0].name",
                "spec.validations[0].expression",
                "spec.validations[1].expression",
                "spec.validations[2].reason"
            ]
        );
        assert_eq!(
            causes[0].1,
            "Unsupported value: \"Maybe\": supported values: \"Fail\", \"Ignore\""
        );
        assert_eq!(
            causes[2].1,
            "Invalid value: \"1x\": must be a valid CEL identifier"
        );
        assert_eq!(causes[3].1, "Required value: expression is not specified");
        assert!(
            causes[4]
                .1
                .starts_with("Invalid value: \"1 +\": compilation failed: ")
        );
    }

    #[test]
    fn mutating_policy_needs_reinvocation_policy_and_typed_mutations() {
        let causes = causes_of(
            true,
            json!({"mutations": [{"patchType": "Nope"}, {"patchType": "JSONPatch"}]}),
        );
        let fields: Vec<&str> = causes.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.matchConstraints",
                "spec.mutations[0].patchType",
                "spec.mutations[1].jsonPatch",
                "spec.reinvocationPolicy"
            ]
        );
        assert_eq!(
            causes[2].1,
            "Required value: must be specified when patchType is JSONPatch"
        );
    }

    #[test]
    fn message_expressions_may_not_name_the_authorizer() {
        let source =
            "request.userInfo.username + string(authorizer.path('/x').check('get').allowed())";
        let causes = causes_of(
            false,
            json!({"matchConstraints": {"resourceRules": [{"resources": ["x"]}]},
                   "validations": [{"expression": "true", "messageExpression": source}]}),
        );
        assert_eq!(causes.len(), 1);
        assert_eq!(causes[0].0, "spec.validations[0].messageExpression");
        assert_eq!(
            causes[0].1,
            format!(
                "Invalid value: {}: compilation failed: ERROR: <input>:1:36: undeclared reference to 'authorizer' (in container '')\n | {source}\n | {}^",
                json!(source),
                ".".repeat(35)
            )
        );
        assert_eq!(identifier_column("object.authorizer", "authorizer"), None);
        assert_eq!(identifier_column("authorizers", "authorizer"), None);
    }

    #[test]
    fn provably_untyped_results_are_refused_as_v136_refuses_them() {
        let causes = causes_of(
            false,
            json!({"matchConstraints": {"resourceRules": [{"resources": ["x"]}]},
                   "variables": [{"name": "v", "expression": "object.spec.y"}],
                   "matchConditions": [{"name": "m", "expression": "variables.v"}],
                   "validations": [{"expression": "variables.v"},
                                   {"expression": "has(object.spec) ? object.spec.x : false"},
                                   {"expression": "object.spec.x == true"}]}),
        );
        assert_eq!(
            causes,
            [
                (
                    "spec.matchConditions[0].expression".to_string(),
                    "Invalid value: \"variables.v\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'variables' (in container '')\n | variables.v\n | ^".to_string()
                ),
                (
                    "spec.validations[0].expression".to_string(),
                    "Invalid value: \"variables.v\": must evaluate to bool but got dyn".to_string()
                ),
                (
                    "spec.validations[1].expression".to_string(),
                    "Invalid value: \"has(object.spec) ? object.spec.x : false\": must evaluate to bool but got dyn".to_string()
                ),
            ]
        );
    }

    #[test]
    fn cel_identifiers() {
        assert!(is_cel_identifier("_a1"));
        assert!(!is_cel_identifier("1x"));
        assert!(!is_cel_identifier("a-b"));
        assert!(!is_cel_identifier(""));
    }
}
