//! Typed admission handlers: what a validating or mutating webhook author writes
//! ([`Validator`], [`Mutator`]), and the one place that turns an `AdmissionReview` body into a
//! call of them and their answer back into a review. The counterpart of controller-runtime's
//! `pkg/webhook/admission` (`CustomValidator`, `CustomDefaulter`, `http.go`'s decoding, and
//! `defaulter_custom.go`'s patch computation).
//!
//! # Versions
//! The API server sends `admission.k8s.io/v1` when the configuration's
//! `admissionReviewVersions` lists it (always from Kubernetes 1.16 on), `v1beta1` otherwise
//! (1.9-1.15). Both carry the same fields; the answer must be in the version asked, so the
//! request's `apiVersion` is copied into the response (kube-core's review types do this).
//!
//! # Why the patch is a diff of two re-encodings
//! A [`Mutator`] changes a typed copy of the object; the runtime answers the JSON Patch between
//! the object *as decoded* and the object *as changed*, both encoded by the same serde code. A
//! diff against the raw request body instead (what controller-runtime does) would also "remove"
//! every field the Rust type does not know and "add" every default serde writes, so a mutator
//! that changes nothing would still rewrite the object. Fields the type does not know are left
//! alone by the patch: it only touches what the handler changed.
//!
//! # Errors never panic
//! A body that is not JSON, a review of an unknown version, a review without a request, or an
//! object that does not decode as `K` is answered with an `AdmissionReview` whose response is
//! `allowed: false` with code 400 and a message naming the problem (controller-runtime's
//! `Errored(http.StatusBadRequest, err)`). The API server reports such an answer to the client as
//! a denial.

use std::future::Future;

use base64::Engine as _;
use futures_util::future::BoxFuture;
use k8s_openapi::api::authentication::v1::UserInfo;
pub use kube_core::admission::Operation;
use kube_core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview};
use kube_core::{DynamicObject, Resource, Status};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// `admission.k8s.io/v1`: what API servers from 1.16 on send.
pub const ADMISSION_V1: &str = "admission.k8s.io/v1";
/// `admission.k8s.io/v1beta1`: what 1.9-1.15 send (and later ones when a configuration asks).
pub const ADMISSION_V1BETA1: &str = "admission.k8s.io/v1beta1";

/// Warnings returned to the client with an allowed (or denied) request: kubectl prints each
/// as `Warning: <text>`. Keep each under 120 characters.
pub type Warnings = Vec<String>;

/// What an admission handler sees of one request.
#[derive(Debug)]
pub struct Admission<'a, K> {
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    pub operation: Operation,
    /// The object being admitted: the new object, or for `DELETE` the object being deleted.
    pub object: &'a K,
    /// The object before the change: set for `UPDATE` (and `DELETE`, where it is `object`).
    pub old_object: Option<&'a K>,
    /// The request is a dry run (`kubectl --dry-run=server`): nothing will be persisted, so a
    /// handler with side effects (creating or counting something elsewhere) must not perform them.
    /// Configurations of such webhooks must declare `sideEffects: NoneOnDryRun`.
    pub dry_run: bool,
    /// The object's namespace (`None` for cluster-scoped kinds).
    pub namespace: Option<&'a str>,
    /// The object's name (empty for a `CREATE` with `generateName`).
    pub name: &'a str,
    /// Who sent the request.
    pub user: &'a UserInfo,
}

/// Why a request is refused, as the API server will report it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denial {
    /// Shown to the client after `admission webhook "<name>" denied the request: `.
    pub message: String,
    /// The HTTP code the API server answers the client with (default 403).
    pub code: u16,
    /// A machine-readable CamelCase reason (`status.reason`), empty for none.
    pub reason: String,
    /// Fail the webhook call itself (HTTP 503) instead of answering a denial, so the
    /// configuration's `failurePolicy` decides: for "cannot judge now" (caches not synced),
    /// never for "judged and refused".
    pub unavailable: bool,
}

impl Denial {
    /// A refusal with code 403 (what the API server uses when the webhook sets no code).
    pub fn forbidden(message: impl Into<String>) -> Denial {
        Denial::with_code(403, message)
    }

    /// A refusal with `code` (for example 422 for an invalid object).
    pub fn with_code(code: u16, message: impl Into<String>) -> Denial {
        Denial {
            message: message.into(),
            code,
            reason: String::new(),
            unavailable: false,
        }
    }

    /// "Cannot judge now": the call fails with HTTP 503 and `message`, and the configuration's
    /// `failurePolicy` (`Fail` or `Ignore`) decides what happens to the request.
    pub fn unavailable(message: impl Into<String>) -> Denial {
        Denial {
            unavailable: true,
            ..Denial::with_code(503, message)
        }
    }

    /// Sets `status.reason`.
    #[must_use]
    pub fn reason(mut self, reason: impl Into<String>) -> Denial {
        self.reason = reason.into();
        self
    }
}

/// A validating admission handler for kind `K` (controller-runtime's `CustomValidator`, with
/// create, update and delete in one method: [`Admission::operation`] says which).
pub trait Validator<K>: Send + Sync + 'static {
    /// Allows the request (with warnings) or refuses it.
    fn validate(
        &self,
        request: &Admission<'_, K>,
    ) -> impl Future<Output = Result<Warnings, Denial>> + Send;
}

/// A mutating admission handler for kind `K` (controller-runtime's `CustomDefaulter`): it
/// changes `object`, a copy of the admitted object, and the runtime answers the JSON Patch of
/// the change.
pub trait Mutator<K>: Send + Sync + 'static {
    /// Changes `object` as wanted (or refuses the request).
    fn mutate(
        &self,
        object: &mut K,
        request: &Admission<'_, K>,
    ) -> impl Future<Output = Result<Warnings, Denial>> + Send;
}

/// What the server does with a review body: the handler's answer, erased of `K`.
pub(crate) trait Handler: Send + Sync {
    fn handle<'a>(&'a self, body: &'a [u8]) -> BoxFuture<'a, Answer>;
}

/// An encoded answer and the HTTP status to send it with.
#[derive(Debug, PartialEq)]
pub(crate) struct Answer {
    /// 200 for every review answer (allowed or not); 503 for [`Denial::unavailable`].
    pub(crate) status: u16,
    pub(crate) body: Vec<u8>,
}

impl Answer {
    pub(crate) fn json(status: u16, value: &impl Serialize) -> Answer {
        match serde_json::to_vec(value) {
            Ok(body) => Answer { status, body },
            Err(error) => Answer {
                status: 500,
                body: format!("encoding the answer failed: {error}").into_bytes(),
            },
        }
    }
}

/// A kind admission handlers can decode and encode.
pub trait Admissible:
    Resource<DynamicType = ()> + Serialize + DeserializeOwned + Clone + Send + Sync + 'static
{
}

impl<T> Admissible for T where
    T: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Clone + Send + Sync + 'static
{
}

/// A [`Validator`] or [`Mutator`] as one call: warnings and, for a mutator, the patch.
pub(crate) trait Judge<K>: Send + Sync + 'static {
    fn judge<'a>(
        &'a self,
        request: &'a Admission<'a, K>,
    ) -> BoxFuture<'a, Result<(Warnings, Option<json_patch::Patch>), Denial>>;
}

/// A [`Validator`] as a [`Judge`].
pub(crate) struct Validating<V>(pub(crate) V);
/// A [`Mutator`] as a [`Judge`].
pub(crate) struct Mutating<M>(pub(crate) M);

impl<K: Admissible, V: Validator<K>> Judge<K> for Validating<V> {
    fn judge<'a>(
        &'a self,
        request: &'a Admission<'a, K>,
    ) -> BoxFuture<'a, Result<(Warnings, Option<json_patch::Patch>), Denial>> {
        Box::pin(async move { Ok((self.0.validate(request).await?, None)) })
    }
}

impl<K: Admissible, M: Mutator<K>> Judge<K> for Mutating<M> {
    fn judge<'a>(
        &'a self,
        request: &'a Admission<'a, K>,
    ) -> BoxFuture<'a, Result<(Warnings, Option<json_patch::Patch>), Denial>> {
        Box::pin(async move {
            let mut changed = request.object.clone();
            let warnings = self.0.mutate(&mut changed, request).await?;
            let patch = patch(request.object, &changed)?;
            Ok((warnings, (!patch.0.is_empty()).then_some(patch)))
        })
    }
}

/// A [`Judge`] of `K` behind [`Handler`]: decodes, judges, encodes.
pub(crate) struct Typed<K, J> {
    judge: J,
    _kind: std::marker::PhantomData<fn() -> K>,
}

impl<K, J> Typed<K, J> {
    pub(crate) fn new(judge: J) -> Self {
        Typed {
            judge,
            _kind: std::marker::PhantomData,
        }
    }
}

impl<K: Admissible, J: Judge<K>> Handler for Typed<K, J> {
    fn handle<'a>(&'a self, body: &'a [u8]) -> BoxFuture<'a, Answer> {
        Box::pin(async move {
            let request = match decode::<K>(body) {
                Ok(request) => request,
                Err(answer) => return answer,
            };
            match self.respond(&request).await {
                Ok(response) => Answer::json(200, &base64_patch(response.into_review())),
                Err(denial) if denial.unavailable => Answer {
                    status: 503,
                    body: denial.message.into_bytes(),
                },
                Err(denial) => Answer::json(200, &deny(&request, denial).into_review()),
            }
        })
    }
}

impl<K: Admissible, J: Judge<K>> Typed<K, J> {
    /// Calls the handler; an allowed answer carries the warnings (and the patch).
    async fn respond(&self, request: &AdmissionRequest<K>) -> Result<AdmissionResponse, Denial> {
        let Some(object) = request.object.as_ref().or(request.old_object.as_ref()) else {
            return Err(Denial::with_code(400, "the review carries no object"));
        };
        let admission = Admission {
            operation: request.operation.clone(),
            object,
            old_object: request.old_object.as_ref(),
            dry_run: request.dry_run,
            namespace: request.namespace.as_deref(),
            name: &request.name,
            user: &request.user_info,
        };
        let (warnings, patch) = self.judge.judge(&admission).await?;
        let mut response = AdmissionResponse::from(request);
        if let Some(patch) = patch {
            response = response
                .with_patch(patch)
                .map_err(|e| Denial::with_code(500, e.to_string()))?;
        }
        if !warnings.is_empty() {
            response.warnings = Some(warnings);
        }
        Ok(response)
    }
}

/// The review as JSON with `response.patch` as base64 text: the wire form of Go's `[]byte`
/// (what the API server documents and sends back in audit logs). kube-core writes it as an array
/// of numbers.
fn base64_patch(review: AdmissionReview<DynamicObject>) -> Value {
    let mut value = serde_json::to_value(review).unwrap_or(Value::Null);
    if let Some(patch) = value.pointer_mut("/response/patch") {
        let bytes: Vec<u8> = serde_json::from_value(patch.take()).unwrap_or_default();
        *patch = Value::String(base64::engine::general_purpose::STANDARD.encode(bytes));
    }
    value
}

/// The JSON Patch from `before` to `after`, both encoded by `K`'s serde code (see the module
/// docs for why).
///
/// # Errors
/// A 500 [`Denial`] if either does not encode (a bug in `K`'s `Serialize`).
pub fn patch<K: Serialize>(before: &K, after: &K) -> Result<json_patch::Patch, Denial> {
    let encode = |object: &K| {
        serde_json::to_value(object)
            .map_err(|e| Denial::with_code(500, format!("encoding the object failed: {e}")))
    };
    Ok(json_patch::diff(&encode(before)?, &encode(after)?))
}

/// The denial of `request` as a response in the request's version.
fn deny<K: Resource>(request: &AdmissionRequest<K>, denial: Denial) -> AdmissionResponse {
    let mut response = AdmissionResponse::from(request).deny(&denial.message);
    response.result = Status::failure(&denial.message, &denial.reason).with_code(denial.code);
    response
}

/// Decodes a review of `K`, or the 400 answer saying why it cannot be.
fn decode<K: Admissible>(body: &[u8]) -> Result<AdmissionRequest<K>, Answer> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| invalid(ADMISSION_V1, "", &format!("the body is not JSON: {e}")))?;
    let text = |pointer: &str| {
        value
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let (version, uid) = (text("/apiVersion"), text("/request/uid"));
    let (version, uid) = (version.as_str(), uid.as_str());
    if version != ADMISSION_V1 && version != ADMISSION_V1BETA1 {
        let message = format!(
            "apiVersion {version:?} is not {ADMISSION_V1} or {ADMISSION_V1BETA1} (kind must be AdmissionReview)"
        );
        return Err(invalid(ADMISSION_V1, uid, &message));
    }
    let review: AdmissionReview<K> = serde_json::from_value(value).map_err(|e| {
        invalid(
            version,
            uid,
            &format!("the AdmissionReview does not decode: {e}"),
        )
    })?;
    review
        .try_into()
        .map_err(|_| invalid(version, uid, "the AdmissionReview carries no request"))
}

/// A 400 answer in `version` for the request `uid` (empty when unknown).
fn invalid(version: &str, uid: &str, message: &str) -> Answer {
    let mut response = AdmissionResponse::invalid(message);
    response.types.api_version = version.to_owned();
    response.uid = uid.to_owned();
    response.result = response.result.with_code(400);
    let review: AdmissionReview<DynamicObject> = response.into_review();
    Answer::json(200, &review)
}

#[cfg(test)]
#[path = "admission_tests.rs"]
mod tests;
