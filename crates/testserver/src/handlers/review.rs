//! The reviews, questions answered and never stored (create only): `SelfSubjectAccessReview` and
//! `SelfSubjectRulesReview` (`authorization.k8s.io/v1`), what `kubectl auth can-i` and `kubectl
//! auth can-i --list` ask, and `SelfSubjectReview` (`authentication.k8s.io/v1`), what `kubectl
//! auth whoami` asks, and `TokenReview` (`handlers/token_review.rs`), what a webhook
//! authenticator or a workload-identity broker asks. Mirrors apiserver
//! `pkg/registry/authorization/selfsubject{access,rules}review/rest.go` and
//! `pkg/registry/authentication/selfsubjectreview/rest.go`: the answer is the request with
//! `status` filled in from the server's [`crate::authz::Authorizer`] or, for
//! `SelfSubjectReview`, the authenticated user itself (a new object: the body's metadata and
//! status are ignored, as v1.36 does).
//!
//! # Differences from the real server
//! - The response carries no `managedFields`; a `SelfSubjectReview` has no `extra` (users here
//!   carry none).
//! - Shapes follow v1.36 (v1.15 answered `creationTimestamp: null` and printed Go structs in
//!   validation messages).

use bytes::Bytes;
use http::{Response, StatusCode};
use serde_json::{Map, Value, json};

use crate::apiserver::ApiServer;
use crate::authz::{Attributes, Decision, Rules, UserInfo};
use crate::body::BoxBody;
use crate::body::json_response;
use crate::kinds::Review;
use crate::object::{now, parse_object};
use crate::request::scope::Scope;
use crate::status::{ApiError, cause};
use crate::validation::check_type_meta;

use super::token_review;

/// `POST .../selfsubject{access,rules}reviews` (`authorization.k8s.io`) and
/// `.../selfsubjectreviews` (`authentication.k8s.io`), answered for the request's authenticated
/// user.
///
/// # Errors
/// 400 for a body that is not a JSON object, 422 Invalid for a spec the real server rejects.
pub(crate) fn create(
    api: &ApiServer,
    target: &Scope,
    review: Review,
    body: &Bytes,
) -> Result<Response<BoxBody>, ApiError> {
    let mut object = parse_object(body)?;
    check_type_meta(&mut object, &target.def)?;
    let spec = object.get("spec").cloned().unwrap_or(Value::Null);
    let user = target.user.clone();
    let authorizer = &api.inner.authorizer;
    let status = match review {
        Review::Access => {
            let attributes = access_attributes(&spec, user)?;
            access_status(&authorizer.authorize(&attributes))
        }
        Review::Rules => {
            let namespace = spec["namespace"].as_str().unwrap_or_default();
            if namespace.is_empty() {
                return Err(ApiError::bad_request("no namespace on request"));
            }
            // The real rules review answers a new object: only the status, empty metadata and
            // spec.
            object.retain(|k, _| k == "apiVersion" || k == "kind");
            object.insert("metadata".into(), json!({}));
            object.insert("spec".into(), json!({}));
            rules_status(&authorizer.rules_for(&user, namespace))
        }
        Review::Token => {
            // v1.36 answers the request with its metadata (a `{}` at least) and the status.
            object.entry("metadata").or_insert_with(|| json!({}));
            token_review::status(api, &spec)?
        }
        Review::Subject => {
            // Whatever the body says, the answer is a new object naming the requesting user.
            object.retain(|k, _| k == "apiVersion" || k == "kind");
            object.insert("metadata".into(), json!({"creationTimestamp": now()}));
            json!({"userInfo": subject_user_info(&user)})
        }
    };
    object.insert("status".into(), status);
    Ok(json_response(
        StatusCode::CREATED,
        Bytes::from(Value::Object(object).to_string()),
    ))
}

/// A `SelfSubjectReview`'s `status.userInfo` (authentication `UserInfo`: empty fields omitted).
fn subject_user_info(user: &UserInfo) -> Value {
    let mut info = Map::new();
    info.insert("username".into(), user.name.clone().into());
    if !user.uid.is_empty() {
        info.insert("uid".into(), user.uid.clone().into());
    }
    if !user.groups.is_empty() {
        info.insert("groups".into(), user.groups.clone().into());
    }
    Value::Object(info)
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
        "authorization.k8s.io",
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
