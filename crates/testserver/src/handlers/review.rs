//! `SelfSubjectAccessReview` and `SelfSubjectRulesReview` (`authorization.k8s.io/v1`, create only):
//! what `kubectl auth can-i` and `kubectl auth can-i --list` ask. Mirrors apiserver
//! `pkg/registry/authorization/selfsubjectaccessreview/rest.go` and
//! `selfsubjectrulesreview/rest.go`: nothing is stored, the answer is the request with `status`
//! filled in from the server's [`crate::authz::Authorizer`], as the requesting user.
//!
//! # Differences from the real server
//! - The response carries no `managedFields`.
//! - Shapes follow v1.36 (v1.15 answered `creationTimestamp: null` and printed Go structs in
//!   validation messages).

use bytes::Bytes;
use http::{Response, StatusCode};
use serde_json::{Map, Value, json};

use crate::apiserver::ApiServer;
use crate::authz::{Attributes, Decision, Rules, UserInfo};
use crate::body::BoxBody;
use crate::body::json_response;
use crate::object::parse_object;
use crate::registry::ResourceDefinition;
use crate::request::scope::Scope;
use crate::status::{ApiError, cause};
use crate::validation::check_type_meta;

const GROUP: &str = "authorization.k8s.io";
const ACCESS: &str = "selfsubjectaccessreviews";
const RULES: &str = "selfsubjectrulesreviews";

/// Whether `def` is one of the review resources this module answers.
pub(crate) fn is_review(def: &ResourceDefinition) -> bool {
    def.group == GROUP && (def.plural == ACCESS || def.plural == RULES)
}

/// `POST /apis/authorization.k8s.io/v1/selfsubject{access,rules}reviews`, answered for `user`
/// (the request's authenticated user).
///
/// # Errors
/// 400 for a body that is not a JSON object, 422 Invalid for a spec the real server rejects.
pub(crate) fn create(
    api: &ApiServer,
    target: &Scope,
    body: &Bytes,
    user: &UserInfo,
) -> Result<Response<BoxBody>, ApiError> {
    let mut review = parse_object(body)?;
    check_type_meta(&mut review, &target.def)?;
    let spec = review.get("spec").cloned().unwrap_or(Value::Null);
    let user = user.clone();
    let authorizer = &api.inner.authorizer;
    let status = if target.def.plural == ACCESS {
        let attributes = access_attributes(&spec, user)?;
        access_status(&authorizer.authorize(&attributes))
    } else {
        let namespace = spec["namespace"].as_str().unwrap_or_default();
        if namespace.is_empty() {
            return Err(ApiError::bad_request("no namespace on request"));
        }
        // The real rules review answers a new object: only the status, empty metadata and spec.
        review.retain(|k, _| k == "apiVersion" || k == "kind");
        review.insert("metadata".into(), json!({}));
        review.insert("spec".into(), json!({}));
        rules_status(&authorizer.rules_for(&user, namespace))
    };
    review.insert("status".into(), status);
    Ok(json_response(
        StatusCode::CREATED,
        Bytes::from(Value::Object(review).to_string()),
    ))
}

/// The authorizer's question from a `SelfSubjectAccessReviewSpec`.
fn access_attributes(spec: &Value, user: UserInfo) -> Result<Attributes, ApiError> {
    let text = |v: &Value, field: &str| v[field].as_str().unwrap_or_default().to_string();
    match (
        spec.get("resourceAttributes").filter(|v| v.is_object()),
        spec.get("nonResourceAttributes").filter(|v| v.is_object()),
    ) {
        (Some(r), None) => Ok(Attributes {
            user,
            verb: text(r, "verb"),
            namespace: text(r, "namespace"),
            group: text(r, "group"),
            version: text(r, "version"),
            resource: text(r, "resource"),
            subresource: text(r, "subresource"),
            name: text(r, "name"),
            path: String::new(),
        }),
        (None, Some(n)) => Ok(Attributes {
            user,
            verb: text(n, "verb"),
            path: text(n, "path"),
            ..Attributes::default()
        }),
        (None, None) => Err(invalid_spec(
            "spec.resourceAttributes",
            "Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified".into(),
        )),
        (Some(_), Some(n)) => Err(invalid_spec(
            "spec.nonResourceAttributes",
            // The real message prints the internal struct as JSON (capitalized Go field names).
            format!(
                "Invalid value: {}: cannot be specified in combination with resourceAttributes",
                json!({"Path": text(n, "path"), "Verb": text(n, "verb")})
            ),
        )),
    }
}

/// 422 for a review spec, worded like the real server (whose message names no kind:
/// `.authorization.k8s.io "" is invalid: ...`).
fn invalid_spec(field: &str, message: String) -> ApiError {
    ApiError::invalid(
        GROUP,
        "",
        "",
        vec![cause("FieldValueInvalid", field, message)],
    )
}

/// `SubjectAccessReviewStatus`: `allowed` always, `denied` and `reason` only when set (Go
/// `omitempty`).
fn access_status(decision: &Decision) -> Value {
    let (allowed, denied, reason) = match decision {
        Decision::Allow { reason } => (true, false, reason),
        Decision::Deny { reason } => (false, true, reason),
        Decision::NoOpinion { reason } => (false, false, reason),
    };
    let mut status = Map::new();
    status.insert("allowed".into(), allowed.into());
    if denied {
        status.insert("denied".into(), true.into());
    }
    if !reason.is_empty() {
        status.insert("reason".into(), reason.as_str().into());
    }
    Value::Object(status)
}

/// `SubjectRulesReviewStatus`.
fn rules_status(rules: &Rules) -> Value {
    let resource_rules: Vec<Value> = rules
        .resource_rules
        .iter()
        .map(|r| {
            let mut rule =
                json!({"verbs": r.verbs, "apiGroups": r.api_groups, "resources": r.resources});
            if !r.resource_names.is_empty() {
                rule["resourceNames"] = json!(r.resource_names);
            }
            rule
        })
        .collect();
    let non_resource_rules: Vec<Value> = rules
        .non_resource_rules
        .iter()
        .map(|r| json!({"verbs": r.verbs, "nonResourceURLs": r.non_resource_urls}))
        .collect();
    let mut status = json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": rules.incomplete,
    });
    if !rules.evaluation_error.is_empty() {
        status["evaluationError"] = json!(rules.evaluation_error);
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authz::{AllowAll, Authorizer};

    #[test]
    fn resource_attributes_become_the_authorizer_question() {
        let spec = json!({"resourceAttributes": {"namespace": "ns", "verb": "create", "group": "apps",
                                                 "resource": "deployments", "subresource": "scale", "name": "web"}});
        let a = access_attributes(&spec, UserInfo::admin()).unwrap();
        assert_eq!(
            (
                a.verb.as_str(),
                a.namespace.as_str(),
                a.group.as_str(),
                a.resource.as_str(),
                a.subresource.as_str(),
                a.name.as_str(),
                a.path.as_str()
            ),
            ("create", "ns", "apps", "deployments", "scale", "web", "")
        );
        assert_eq!(a.user, UserInfo::admin());
    }

    #[test]
    fn non_resource_attributes_carry_path_and_verb_only() {
        let spec = json!({"nonResourceAttributes": {"path": "/healthz", "verb": "get"}});
        let a = access_attributes(&spec, UserInfo::admin()).unwrap();
        assert_eq!(
            (a.verb.as_str(), a.path.as_str(), a.resource.as_str()),
            ("get", "/healthz", "")
        );
    }

    #[test]
    fn a_spec_with_neither_or_both_attribute_kinds_is_invalid() {
        let neither = access_attributes(&json!({}), UserInfo::admin()).unwrap_err();
        assert_eq!(neither.code, 422);
        assert_eq!(
            neither.message,
            ".authorization.k8s.io \"\" is invalid: spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified"
        );
        let spec = json!({"resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"verb": "get"}});
        let both = access_attributes(&spec, UserInfo::admin()).unwrap_err();
        assert_eq!(
            both.message,
            ".authorization.k8s.io \"\" is invalid: spec.nonResourceAttributes: Invalid value: {\"Path\":\"\",\"Verb\":\"get\"}: cannot be specified in combination with resourceAttributes"
        );
    }

    #[test]
    fn decisions_map_to_allowed_denied_and_reason() {
        let reason = |r: &str| r.to_string();
        assert_eq!(
            access_status(&Decision::Allow { reason: reason("") }),
            json!({"allowed": true})
        );
        assert_eq!(
            access_status(&Decision::Deny {
                reason: reason("no")
            }),
            json!({"allowed": false, "denied": true, "reason": "no"})
        );
        assert_eq!(
            access_status(&Decision::NoOpinion { reason: reason("") }),
            json!({"allowed": false})
        );
    }

    #[test]
    fn allow_all_rules_render_like_an_always_allow_server() {
        let status = rules_status(&AllowAll.rules_for(&UserInfo::admin(), "default"));
        assert_eq!(
            status,
            json!({"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                   "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                   "incomplete": false})
        );
    }
}
