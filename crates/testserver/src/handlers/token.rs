//! The TokenRequest API: `POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token` issues a
//! token for a ServiceAccount (`pkg/registry/core/serviceaccount/storage/token.go`). The tokens
//! are opaque strings remembered in `crate::storage::tokens`, which `crate::authn`
//! accepts.

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
use crate::storage::tokens::Issued;

const AUDIENCE: &str = "https://kubernetes.default.svc";
const DEFAULT_EXPIRATION: i64 = 3600;
const MIN_EXPIRATION: i64 = 600;

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
    if seconds < MIN_EXPIRATION {
        let message =
            format!("Invalid value: {seconds}: may not specify a duration less than 10 minutes");
        return Err(ApiError::invalid(
            "authentication.k8s.io",
            "TokenRequest",
            "",
            vec![cause(
                "FieldValueInvalid",
                "spec.expirationSeconds",
                message,
            )],
        ));
    }
    let (name, namespace, uid) = service_account(api, target)?;
    let expires = Timestamp::now() + SignedDuration::from_secs(seconds);
    let token = format!("kubegen-sa.{}", uuid::Uuid::new_v4().simple());
    api.inner.tokens.tokens.lock().insert(
        token.clone(),
        Issued {
            namespace: namespace.clone(),
            name: name.clone(),
            uid: uid.clone(),
            expires,
        },
    );
    let audiences = match &spec["audiences"] {
        Value::Array(list) if !list.is_empty() => Value::Array(list.clone()),
        _ => json!([AUDIENCE]),
    };
    request.insert("kind".into(), "TokenRequest".into());
    request.insert("apiVersion".into(), "authentication.k8s.io/v1".into());
    request.insert(
        "metadata".into(),
        json!({"name": name, "namespace": namespace, "uid": uid, "creationTimestamp": now()}),
    );
    request.insert(
        "spec".into(),
        json!({"audiences": audiences, "expirationSeconds": seconds, "boundObjectRef": null}),
    );
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
