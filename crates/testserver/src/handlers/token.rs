//! The TokenRequest API: `POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token` issues a
//! token for a ServiceAccount (`pkg/registry/core/serviceaccount/storage/token.go`): a JWT signed
//! with the server's key (`crate::jwt`), with v1.36's claims (`crate::storage::tokens::claims`),
//! which `crate::authn` and TokenReviews accept.
//!
//! # Guarantees
//! - `expirationSeconds` defaults to 3600 and must lie in [600, 2^32]; audiences default to the
//!   API audience (the issuer, `https://kubernetes.default.svc`).
//! - `boundObjectRef` binds the token to a Pod (of this ServiceAccount; the Node it runs on is
//!   named too), a Secret or a Node: the claims name it with its uid, and the token dies with it.
//! - A Pod-bound token asked for 3607 seconds (what the kubelet asks for) is extended to a year
//!   with `warnafter` at 3607 seconds, as v1.36's `--service-account-extend-token-expiration`.
//!
//! # Differences from the real server
//! - Tokens are signed ES256 with a generated P-256 key (see `crate::jwt` for why), where the
//!   reference server is given an RSA key and signs RS256; there is no
//!   `--service-account-max-token-expiration`.
//! - The answer carries no `managedFields`.

use bytes::Bytes;
use http::{Response, StatusCode};
use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::apiserver::ApiServer;
use crate::body::{BoxBody, json_response};
use crate::object::{now, parse_object};
use crate::request::route::Target;
use crate::request::scope::Scope;
use crate::status::{ApiError, cause};
use crate::storage::State;
use crate::storage::tokens::{self, BoundObject, ISSUER, TokenSpec, lookup, uid_of};

const DEFAULT_EXPIRATION: i64 = 3600;
const MIN_EXPIRATION: i64 = 600;
/// `MaxTokenAgeSec`: 2^32 seconds.
const MAX_EXPIRATION: i64 = 1 << 32;
/// `WarnOnlyBoundTokenExpirationSeconds`: what the kubelet asks for a projected token.
const WARN_ONLY_EXPIRATION: i64 = 3607;
/// `ExpirationExtensionSeconds`: a year.
const EXTENDED_EXPIRATION: i64 = 365 * 24 * 3600;

/// `POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token`: issues a token for the
/// ServiceAccount and answers the TokenRequest with `status.token` and
/// `status.expirationTimestamp`, the metadata naming the ServiceAccount.
///
/// # Errors
/// 404 for a missing namespace or ServiceAccount, 422 for an
/// `expirationSeconds` under ten minutes, 400 for a body that is not an object.
pub(crate) fn token_request(
    api: &ApiServer,
    target: &Scope,
    body: &Bytes,
) -> Result<Response<BoxBody>, ApiError> {
    let mut request = parse_object(body)?;
    let spec = request.get("spec").cloned().unwrap_or_else(|| json!({}));
    let seconds = spec["expirationSeconds"]
        .as_i64()
        .unwrap_or(DEFAULT_EXPIRATION);
    check_expiration(seconds)?;
    let (name, namespace, uid) = service_account(api, target)?;
    let audiences: Vec<String> = match &spec["audiences"] {
        Value::Array(list) if !list.is_empty() => list
            .iter()
            .filter_map(|a| a.as_str().map(String::from))
            .collect(),
        _ => vec![ISSUER.to_string()],
    };
    let reference = spec.get("boundObjectRef").filter(|r| r.is_object());
    let bound = match reference {
        Some(reference) => {
            let state = api.inner.storage.lock();
            bound_objects(&state, reference, &namespace, &name)?
        }
        None => Vec::new(),
    };
    let pod_bound = bound.iter().any(|b| b.claim == "pod");
    let extended = pod_bound && seconds == WARN_ONLY_EXPIRATION && audiences == [ISSUER];
    let issued = Timestamp::now();
    let token_spec = TokenSpec {
        namespace: &namespace,
        account: &name,
        account_uid: &uid,
        audiences: &audiences,
        lifetime: if extended {
            EXTENDED_EXPIRATION
        } else {
            seconds
        },
        warn_after: extended.then_some(seconds),
        bound,
    };
    let claims = tokens::claims(&token_spec, issued);
    let token = api
        .inner
        .tokens
        .key()
        .sign(&claims)
        .map_err(ApiError::internal)?;
    request.insert("kind".into(), "TokenRequest".into());
    request.insert("apiVersion".into(), "authentication.k8s.io/v1".into());
    request.insert(
        "metadata".into(),
        json!({"name": name, "namespace": namespace, "uid": uid, "creationTimestamp": now()}),
    );
    request.insert(
        "spec".into(),
        json!({"audiences": audiences, "expirationSeconds": seconds,
               "boundObjectRef": reference.cloned().unwrap_or(Value::Null)}),
    );
    // The status names the requested lifetime, also when the token itself was extended.
    let expires = issued + SignedDuration::from_secs(seconds);
    let expiration = expires.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    request.insert(
        "status".into(),
        json!({"token": token, "expirationTimestamp": expiration}),
    );
    Ok(json_response(
        StatusCode::CREATED,
        Bytes::from(Value::Object(request).to_string()),
    ))
}

/// `ValidateTokenRequest`: at least ten minutes, at most 2^32 seconds.
fn check_expiration(seconds: i64) -> Result<(), ApiError> {
    let detail = if seconds < MIN_EXPIRATION {
        "may not specify a duration less than 10 minutes"
    } else if seconds > MAX_EXPIRATION {
        "may not specify a duration larger than 2^32 seconds"
    } else {
        return Ok(());
    };
    Err(ApiError::invalid(
        "authentication.k8s.io",
        "TokenRequest",
        "",
        vec![cause(
            "FieldValueInvalid",
            "spec.expirationSeconds",
            format!("Invalid value: {seconds}: {detail}"),
        )],
    ))
}

/// The objects a `boundObjectRef` binds the token to: the Secret, Node or Pod (and the Node the
/// Pod runs on, when that exists).
///
/// # Errors
/// 400 for a kind other than core Pod, Secret or Node, a missing name, or a Pod of another
/// ServiceAccount; 404 for a missing object; 409 when the reference's uid is not the object's.
fn bound_objects(
    state: &State,
    reference: &Value,
    namespace: &str,
    account: &str,
) -> Result<Vec<BoundObject>, ApiError> {
    let text = |key: &str| reference[key].as_str().unwrap_or_default();
    let (api_version, kind, name) = (text("apiVersion"), text("kind"), text("name"));
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let (plural, claim, scope) = match (group, kind) {
        ("", "Pod") => ("pods", "pod", namespace),
        ("", "Secret") => ("secrets", "secret", namespace),
        ("", "Node") => ("nodes", "node", ""),
        _ => {
            let gvk = format!("{group}/{version}, Kind={kind}");
            return Err(ApiError::bad_request(format!(
                "cannot bind token to object of type {gvk}"
            )));
        }
    };
    if name.is_empty() {
        return Err(ApiError::bad_request("Name parameter required."));
    }
    let what = crate::status::Qualified {
        group: "",
        resource: plural,
    };
    let object =
        lookup(state, plural, scope, name).ok_or_else(|| ApiError::not_found(what, name))?;
    if claim == "pod" && object["spec"]["serviceAccountName"].as_str() != Some(account) {
        return Err(ApiError::bad_request(format!(
            "cannot bind token for serviceaccount \"{account}\" to pod running with different serviceaccount name."
        )));
    }
    let uid = uid_of(&object);
    let given = text("uid");
    if !given.is_empty() && given != uid {
        let kind_as_resource = crate::status::Qualified {
            group: "",
            resource: kind,
        };
        let why = format!(
            "the UID in the bound object reference ({given}) does not match the UID in record. The object might have been deleted and then recreated"
        );
        return Err(ApiError::conflict(kind_as_resource, name, &why));
    }
    let mut bound = vec![BoundObject {
        claim,
        name: name.to_string(),
        uid,
    }];
    let node_name = object["spec"]["nodeName"].as_str().unwrap_or_default();
    if claim == "pod" && !node_name.is_empty() {
        // A missing node is left out, as the real server ignores the error.
        if let Some(node) = lookup(state, "nodes", "", node_name) {
            bound.push(BoundObject {
                claim: "node",
                name: node_name.to_string(),
                uid: uid_of(&node),
            });
        }
    }
    Ok(bound)
}

/// Name, namespace and uid of the ServiceAccount `target` names; its namespace is checked first,
/// as the real server does.
fn service_account(api: &ApiServer, target: &Target) -> Result<(String, String, String), ApiError> {
    let namespace = target.namespace.clone().unwrap_or_default();
    let state = api.inner.storage.lock();
    let namespaces = state.registry.get("", "v1", "namespaces");
    let namespace_exists = namespaces.is_some_and(|def| {
        state
            .store
            .get(&def.key(), &(String::new(), namespace.clone()))
            .is_some()
    });
    if !namespace_exists {
        let what = crate::status::Qualified {
            group: "",
            resource: "namespaces",
        };
        return Err(ApiError::not_found(what, &namespace));
    }
    let (stored, (_, name)) = state.existing(&target.def, target.object_key())?;
    let uid = stored.value["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    Ok((name, namespace, uid))
}

#[cfg(test)]
#[path = "token_tests.rs"]
mod tests;
