//! The `AdmissionReview` sent to a webhook and the reading of its answer (apiserver
//! `pkg/admission/plugin/webhook/request/admissionreview.go`: `CreateAdmissionObjects`,
//! `VerifyAdmissionResponse`).

use base64::Engine as _;
use bytes::Bytes;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::admission::plugin::{Attributes, Operation};
use crate::admission::webhook::config::Webhook;
use crate::status::ApiError;

/// What every review of one write carries; the kind and resource in the webhook's version, the
/// objects in it and the uid are added per call.
pub(crate) struct Review {
    request: Value,
    /// `group`, `kind` and `resource` of the written resource.
    names: (String, String, String),
    pub(crate) name: String,
    /// The stored object an update or delete changes, in the version the handlers run in.
    pub(crate) old: Option<Value>,
}

/// A webhook's answer, verified.
pub(crate) struct Answer {
    /// The `Status` of a denial.
    pub(crate) denial: Option<ApiError>,
    /// A mutating webhook's JSONPatch.
    pub(crate) patch: Option<json_patch::Patch>,
    pub(crate) warnings: Vec<String>,
    /// `auditAnnotations`, logged as `<webhook name>/<key>`.
    pub(crate) audit_annotations: std::collections::BTreeMap<String, String>,
}

impl Review {
    pub(crate) fn new(attributes: &Attributes<'_>, options: Value) -> Review {
        let scope = attributes.scope;
        let def = &scope.def;
        let names = (def.group.clone(), def.kind.clone(), def.plural.clone());
        let version = scope.request_version.as_ref().unwrap_or(&def.version);
        let (kind, resource) = kind_and_resource(&names, version);
        let operation = match attributes.operation {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
        };
        let mut user = json!({"username": scope.user.name, "groups": scope.user.groups});
        if !scope.user.uid.is_empty() {
            user["uid"] = scope.user.uid.clone().into();
        }
        let mut request = json!({
            "requestKind": kind, "requestResource": resource,
            "operation": operation, "userInfo": user,
            "dryRun": scope.dry_run, "options": options,
        });
        if let Some(sub) = scope.subresource.as_deref() {
            request["subResource"] = sub.into();
            request["requestSubResource"] = sub.into();
        }
        if let Some(ns) = scope.namespace.as_deref() {
            request["namespace"] = ns.into();
        }
        Review {
            request,
            names,
            name: attributes.name.to_string(),
            old: attributes.old.cloned(),
        }
    }

    /// The `AdmissionRequest` to a webhook of `version` about `object` and `old` (in that
    /// version), without a uid (what `matchConditions` see as `request`).
    pub(crate) fn request(
        &self,
        version: &str,
        (object, old): (Option<&Value>, Option<&Value>),
    ) -> Value {
        let mut request = self.request.clone();
        let (kind, resource) = kind_and_resource(&self.names, version);
        request["kind"] = kind;
        request["resource"] = resource;
        if !self.name.is_empty() {
            request["name"] = self.name.clone().into();
        }
        request["object"] = object.cloned().unwrap_or(Value::Null);
        request["oldObject"] = old.cloned().unwrap_or(Value::Null);
        request
    }

    /// The review for `hook` with a fresh uid, and that uid.
    pub(crate) fn body(
        &self,
        hook: &Webhook,
        objects: (Option<&Value>, Option<&Value>),
    ) -> (String, Bytes) {
        let uid = uuid::Uuid::new_v4().to_string();
        let mut request = self.request(&hook.version, objects);
        request["uid"] = uid.clone().into();
        let version = version_for(hook);
        let review = json!({"kind": "AdmissionReview", "apiVersion": version, "request": request});
        (uid, Bytes::from(review.to_string()))
    }
}

/// The `GroupVersionKind` and `GroupVersionResource` of the written resource in `version`.
fn kind_and_resource(
    (group, kind, plural): &(String, String, String),
    version: &str,
) -> (Value, Value) {
    (
        json!({"group": group, "version": version, "kind": kind}),
        json!({"group": group, "version": version, "resource": plural}),
    )
}

/// The first of the webhook's `admissionReviewVersions` this server sends.
fn version_for(hook: &Webhook) -> &'static str {
    hook.admission_review_versions
        .iter()
        .find_map(|v| match v.as_str() {
            "v1" => Some("admission.k8s.io/v1"),
            "v1beta1" => Some("admission.k8s.io/v1beta1"),
            _ => None,
        })
        .unwrap_or("admission.k8s.io/v1")
}

/// A `caBundle` (base64 of PEM, as JSON carries `[]byte`); undecodable yields no trust.
pub(crate) fn decode_ca(bundle: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(bundle)
        .unwrap_or_default()
}

#[derive(Deserialize)]
struct ReviewAnswer {
    response: Option<Response>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Response {
    #[serde(default)]
    uid: String,
    #[serde(default)]
    allowed: bool,
    #[serde(default)]
    status: Option<Value>,
    #[serde(default)]
    patch: Option<String>,
    #[serde(default)]
    patch_type: Option<String>,
    #[serde(default)]
    warnings: Vec<String>,
    #[serde(default)]
    audit_annotations: std::collections::BTreeMap<String, String>,
}

/// Reads a webhook's answer to the review `uid`.
///
/// # Errors
/// The message after `failed calling webhook "<name>": ` for an unreadable or invalid answer.
pub(crate) fn answer(bytes: &[u8], uid: &str, name: &str) -> Result<Answer, String> {
    let review: ReviewAnswer = serde_json::from_slice(bytes).map_err(|e| {
        format!("failed to call webhook: couldn't get version/kind; json parse error: {e}")
    })?;
    let invalid = |why: String| format!("received invalid webhook response: {why}");
    let response = review
        .response
        .ok_or_else(|| invalid("webhook response was absent".into()))?;
    if response.uid != uid {
        return Err(invalid(format!(
            "expected response.uid={uid:?}, got {:?}",
            response.uid
        )));
    }
    let patch = match (&response.patch, response.patch_type.as_deref()) {
        (None, _) => None,
        (Some(_), Some("JSONPatch")) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(response.patch.as_deref().unwrap_or(""))
                .map_err(|e| invalid(format!("patch: {e}")))?;
            let patch = serde_json::from_slice(&bytes).map_err(|e| invalid(e.to_string()))?;
            Some(patch)
        }
        (Some(_), other) => {
            return Err(invalid(format!(
                "expected patchType JSONPatch, got {:?}",
                other.unwrap_or("")
            )));
        }
    };
    let denial = (!response.allowed).then(|| denial(name, response.status.as_ref()));
    Ok(Answer {
        denial,
        patch,
        warnings: response.warnings,
        audit_annotations: response.audit_annotations,
    })
}

/// The `Status` of a denial: the webhook's code (400 when unset) and reason, its message after
/// `admission webhook "<name>" denied the request`.
fn denial(name: &str, status: Option<&Value>) -> ApiError {
    let text = |f: &str| {
        status
            .and_then(|s| s.get(f))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let code = status
        .and_then(|s| s.get("code"))
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| *c != 0)
        .unwrap_or(400);
    let message = match text("message") {
        "" => format!("admission webhook \"{name}\" denied the request without explanation"),
        why => format!("admission webhook \"{name}\" denied the request: {why}"),
    };
    ApiError::from_webhook(code, text("reason"), message)
}
