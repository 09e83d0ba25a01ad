//! Type checking of admission policies' expressions when a ValidatingAdmissionPolicy or
//! MutatingAdmissionPolicy is written (apiserver `pkg/admission/plugin/cel/compile.go`, which
//! declares the variables, and `pkg/apis/admissionregistration/validation/validation.go`, which
//! compiles every expression): `object`, `oldObject` and `params` are `dyn`, `request` and
//! `namespaceObject` are the typed records v1.36 declares, `variables` has one field per
//! variable of the policy, typed by its expression.
//!
//! What [`crate::cel_check`] does not type is `dyn` here too, so this refuses only what v1.36
//! refuses.

use serde_json::Value;

use crate::cel_check::check;
use crate::cel_types::{CelType, Record};
use crate::node::Node;

/// What a policy expression sees.
#[derive(Clone, Debug, Default)]
pub struct PolicyScope {
    /// `params` is declared (the policy has a `paramKind`).
    pub params: bool,
    /// `authorizer` is declared (everywhere but in message expressions).
    pub authorizer: bool,
    /// The policy's variables, `(name, expression)` in order; `None` where `variables` is not
    /// declared (match conditions).
    pub variables: Option<Vec<(String, String)>>,
}

/// The schemas that type `object` and `oldObject` (the matched kind's) and `params` (the
/// `paramKind`'s), each as [`kind_schema`](crate::kind_schema) gives it; `None` leaves the
/// variable `dyn`, as when the policy is written.
#[derive(Clone, Copy, Debug, Default)]
pub struct PolicyTypes<'a> {
    /// The matched kind's schema.
    pub object: Option<&'a Value>,
    /// The parameter kind's schema.
    pub params: Option<&'a Value>,
}

/// Type-checks a policy expression: the name of its result type as cel-go spells it (`bool`,
/// `string`, `dyn`, ...), or cel-go's issues text (`ERROR: <input>:1:8: undefined field ...`
/// with source and caret lines). `None` when the parser here cannot read it.
pub fn check_policy_expression(
    source: &str,
    scope: &PolicyScope,
) -> Option<Result<String, String>> {
    check_typed_policy_expression(source, scope, PolicyTypes::default())
}

/// [`check_policy_expression`] with `object`, `oldObject` and `params` typed by `types`: what
/// kube-controller-manager's policy status controller does for each kind a policy matches
/// (apiserver `pkg/admission/plugin/policy/validating/typechecking.go`).
pub fn check_typed_policy_expression(
    source: &str,
    scope: &PolicyScope,
    types: PolicyTypes<'_>,
) -> Option<Result<String, String>> {
    let variables = declared(scope, types);
    let found = check(source, &variables)?;
    Some(found.map(|ty| ty.to_string()))
}

/// The type of a resource of `schema`, `dyn` without one (or where the real server has none).
fn resource_type(schema: Option<&Value>) -> CelType<'_> {
    schema
        .and_then(|schema| CelType::of_rule_node(Node(schema), true))
        .unwrap_or(CelType::Dyn)
}

/// The variables of `scope` with their types.
fn declared<'a>(scope: &PolicyScope, types: PolicyTypes<'a>) -> Vec<(&'static str, CelType<'a>)> {
    let object = resource_type(types.object);
    let mut declared = vec![
        ("object", object.clone()),
        ("oldObject", object),
        ("request", admission_request()),
        ("namespaceObject", namespace()),
    ];
    if scope.params {
        declared.push(("params", resource_type(types.params)));
    }
    if scope.authorizer {
        declared.push(("authorizer", CelType::Dyn));
    }
    if let Some(variables) = &scope.variables {
        let mut record = Record {
            name: "kubernetes.variables",
            fields: Vec::new(),
        };
        for (name, expression) in variables {
            let mut seen = declared.clone();
            seen.push(("variables", CelType::Record(record.clone())));
            let ty = match check(expression, &seen) {
                Some(Ok(ty)) => ty,
                _ => CelType::Dyn,
            };
            record.fields.push((name.clone(), ty));
        }
        declared.push(("variables", CelType::Record(record)));
    }
    declared
}

fn record(name: &'static str, fields: &[(&str, CelType<'static>)]) -> CelType<'static> {
    CelType::Record(Record {
        name,
        fields: fields
            .iter()
            .map(|(field, ty)| ((*field).to_string(), ty.clone()))
            .collect(),
    })
}

fn strings() -> CelType<'static> {
    CelType::List(Box::new(CelType::String))
}

/// `kubernetes.AdmissionRequest` (`BuildRequestType`).
fn admission_request() -> CelType<'static> {
    let gvk = record(
        "kubernetes.GroupVersionKind",
        &[
            ("group", CelType::String),
            ("version", CelType::String),
            ("kind", CelType::String),
        ],
    );
    let gvr = record(
        "kubernetes.GroupVersionResource",
        &[
            ("group", CelType::String),
            ("version", CelType::String),
            ("resource", CelType::String),
        ],
    );
    let user = record(
        "kubernetes.UserInfo",
        &[
            ("username", CelType::String),
            ("uid", CelType::String),
            ("groups", strings()),
            (
                "extra",
                CelType::Map(Box::new(CelType::String), Box::new(strings())),
            ),
        ],
    );
    record(
        "kubernetes.AdmissionRequest",
        &[
            ("kind", gvk.clone()),
            ("resource", gvr.clone()),
            ("subResource", CelType::String),
            ("requestKind", gvk),
            ("requestResource", gvr),
            ("requestSubResource", CelType::String),
            ("name", CelType::String),
            ("namespace", CelType::String),
            ("operation", CelType::String),
            ("userInfo", user),
            ("dryRun", CelType::Bool),
            ("options", CelType::Dyn),
        ],
    )
}

/// `kubernetes.Namespace` (`BuildNamespaceType`).
fn namespace() -> CelType<'static> {
    let string_map = CelType::Map(Box::new(CelType::String), Box::new(CelType::String));
    let condition = record(
        "kubernetes.NamespaceCondition",
        &[
            ("status", CelType::String),
            ("type", CelType::String),
            ("lastTransitionTime", CelType::Timestamp),
            ("message", CelType::String),
            ("reason", CelType::String),
        ],
    );
    let metadata = record(
        "kubernetes.NamespaceMetadata",
        &[
            ("name", CelType::String),
            ("generateName", CelType::String),
            ("namespace", CelType::String),
            ("labels", string_map.clone()),
            ("annotations", string_map),
            ("UID", CelType::String),
            ("creationTimestamp", CelType::Timestamp),
            ("deletionGracePeriodSeconds", CelType::Int),
            ("deletionTimestamp", CelType::Timestamp),
            ("generation", CelType::Int),
            ("resourceVersion", CelType::String),
            ("finalizers", strings()),
        ],
    );
    record(
        "kubernetes.Namespace",
        &[
            ("metadata", metadata),
            (
                "spec",
                record("kubernetes.NamespaceSpec", &[("finalizers", strings())]),
            ),
            (
                "status",
                record(
                    "kubernetes.NamespaceStatus",
                    &[
                        ("conditions", CelType::List(Box::new(condition))),
                        ("phase", CelType::String),
                    ],
                ),
            ),
        ],
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn scope() -> PolicyScope {
        PolicyScope {
            params: false,
            authorizer: true,
            variables: Some(vec![
                ("a".into(), "1".into()),
                ("b".into(), "variables.a > 0".into()),
            ]),
        }
    }

    /// `status.typeChecking` warnings v1.36's controller-manager wrote for a policy on
    /// Deployments (less the `apps/v1, Kind=Deployment: ` it puts before each).
    #[test]
    fn a_typed_object_gets_v1_36_type_checking_verdicts() {
        let deployment = serde_json::json!({
            "type": "object",
            "properties": {
                "apiVersion": {"type": "string"},
                "kind": {"type": "string"},
                "metadata": {"type": "object", "properties": {
                    "name": {"type": "string"}, "generateName": {"type": "string"}
                }},
                "spec": {"type": "object", "properties": {
                    "replicas": {"type": "integer", "format": "int32"}
                }}
            }
        });
        let types = PolicyTypes {
            object: Some(&deployment),
            params: None,
        };
        let check = |source: &str| check_typed_policy_expression(source, &scope(), types).unwrap();
        assert_eq!(
            check("object.spec.replicass > 1"),
            Err("ERROR: <input>:1:12: undefined field 'replicass'\n | object.spec.replicass > 1\n | ...........^".into())
        );
        assert_eq!(
            check("object.spec.replicas > 'a'"),
            Err("ERROR: <input>:1:22: found no matching overload for '_>_' applied to '(int, string)'\n | object.spec.replicas > 'a'\n | .....................^".into())
        );
        assert_eq!(check("object.metadata.name.size() < 10"), Ok("bool".into()));
        assert_eq!(
            check("string(oldObject.spec.replicas)"),
            Ok("string".into())
        );
        assert_eq!(
            check_policy_expression("object.spec.replicass > 1", &scope()),
            Some(Ok("bool".into())),
            "untyped when the policy is written"
        );
    }

    /// Messages recorded on v1.36 with ValidatingAdmissionPolicies using these expressions.
    #[test]
    fn policy_expressions_get_v1_36_verdicts() {
        let check = |source: &str| check_policy_expression(source, &scope()).unwrap();
        assert_eq!(check("variables.b && request.dryRun"), Ok("bool".into()));
        assert_eq!(check("object.spec.replicas > 1"), Ok("bool".into()));
        assert_eq!(check("request.name"), Ok("string".into()));
        assert_eq!(
            check("variables.a > \"x\""),
            Err("ERROR: <input>:1:13: found no matching overload for '_>_' applied to '(int, string)'\n | variables.a > \"x\"\n | ............^".into())
        );
        assert_eq!(
            check("variables.c == 1"),
            Err(
                "ERROR: <input>:1:10: undefined field 'c'\n | variables.c == 1\n | .........^"
                    .into()
            )
        );
        assert_eq!(
            check("params.x == 1"),
            Err("ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^".into())
        );
        assert_eq!(
            check("namespaceObject.metadata.labels.x == 1"),
            Err("ERROR: <input>:1:35: found no matching overload for '_==_' applied to '(string, int)'\n | namespaceObject.metadata.labels.x == 1\n | ..................................^".into())
        );
        assert_eq!(
            check("request.userInfo.groups.exists(g, g == 1)"),
            Err("ERROR: <input>:1:37: found no matching overload for '_==_' applied to '(string, int)'\n | request.userInfo.groups.exists(g, g == 1)\n | ....................................^".into())
        );
    }
}
