//! The server side of CRD conversion webhooks: a registry of [`Convert`] handlers keyed by
//! group and kind, answering `ConversionReview`s (`apiextensions.k8s.io/v1` and `v1beta1`, in
//! the version asked). The counterpart of controller-runtime's `pkg/webhook/conversion`
//! (served at `/convert`, one path for every kind, dispatching by the objects' kind).
//!
//! The conversion *functions* are the kind's business (hand-written, or generated later by
//! kubegen's codegen); this module only routes each object to its kind's handler, checks what
//! comes back, and answers. One failing object fails the whole review, as the API server
//! requires (it converts lists all or nothing).

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use kube_core::Status;
use kube_core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
use serde_json::Value;

use super::admission::{Answer, Handler};

/// `apiextensions.k8s.io/v1`: what API servers from 1.16 on send.
pub const CONVERSION_V1: &str = "apiextensions.k8s.io/v1";
/// `apiextensions.k8s.io/v1beta1`: what 1.13-1.15 send.
pub const CONVERSION_V1BETA1: &str = "apiextensions.k8s.io/v1beta1";

/// Converts objects of one kind between its versions.
pub trait Convert: Send + Sync + 'static {
    /// Returns `object` (an object of this kind in any served version) in `desired_api_version`
    /// (`group/version`). Only `apiVersion`, the spec and status, labels and annotations may
    /// change; the API server refuses an answer that changes other metadata.
    ///
    /// # Errors
    /// Why the object cannot be converted; the API server fails the request with it.
    fn convert(&self, object: Value, desired_api_version: &str) -> Result<Value, String>;
}

/// The conversion handlers of one process, keyed by `(group, kind)`.
#[derive(Clone, Default)]
pub(crate) struct Conversions {
    by_kind: HashMap<(String, String), Arc<dyn Convert>>,
}

impl Conversions {
    pub(crate) fn add(&mut self, group: &str, kind: &str, convert: impl Convert) {
        self.by_kind
            .insert((group.to_owned(), kind.to_owned()), Arc::new(convert));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.by_kind.is_empty()
    }

    /// Converts one object, checking the handler's answer.
    fn convert_one(&self, object: Value, desired: &str) -> Result<Value, String> {
        let api_version = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let kind = object
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if api_version == desired {
            return Ok(object);
        }
        let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
        let handler = self
            .by_kind
            .get(&(group.to_owned(), kind.to_owned()))
            .ok_or_else(|| {
                format!("no conversion is registered for kind {kind:?} of group {group:?}")
            })?;
        let name = object.pointer("/metadata/name").cloned();
        let converted = handler.convert(object, desired)?;
        let got = converted.get("apiVersion").and_then(Value::as_str);
        if got != Some(desired) {
            return Err(format!(
                "converting {kind} from {api_version} to {desired} returned apiVersion {got:?}"
            ));
        }
        if converted.pointer("/metadata/name").cloned() != name {
            return Err(format!(
                "converting {kind} from {api_version} to {desired} changed metadata.name"
            ));
        }
        Ok(converted)
    }

    fn review(&self, body: &[u8]) -> Answer {
        let review: ConversionReview = match serde_json::from_slice(body) {
            Ok(review) => review,
            Err(e) => {
                return invalid(
                    CONVERSION_V1,
                    &format!("the ConversionReview does not decode: {e}"),
                );
            }
        };
        let version = review.types.api_version.clone();
        if version != CONVERSION_V1 && version != CONVERSION_V1BETA1 {
            let message = format!(
                "apiVersion {version:?} is not {CONVERSION_V1} or {CONVERSION_V1BETA1} (kind must be ConversionReview)"
            );
            return invalid(CONVERSION_V1, &message);
        }
        let request = match ConversionRequest::from_review(review) {
            Ok(request) => request,
            Err(_) => return invalid(&version, "the ConversionReview carries no request"),
        };
        let desired = request.desired_api_version.clone();
        let objects = request.objects.clone();
        let response = ConversionResponse::for_request(request);
        let converted: Result<Vec<Value>, String> = objects
            .into_iter()
            .map(|object| self.convert_one(object, &desired))
            .collect();
        let response = match converted {
            Ok(objects) => response.success(objects),
            Err(message) => response.failure(Status::failure(&message, "ConversionFailed")),
        };
        Answer::json(200, &response.into_review())
    }
}

impl Handler for Conversions {
    fn handle<'a>(&'a self, body: &'a [u8]) -> BoxFuture<'a, Answer> {
        Box::pin(async move { self.review(body) })
    }
}

/// A failure answer in `version` to a review that could not be read.
fn invalid(version: &str, message: &str) -> Answer {
    let mut review =
        ConversionResponse::invalid(Status::failure(message, "BadRequest").with_code(400))
            .into_review();
    version.clone_into(&mut review.types.api_version);
    Answer::json(200, &review)
}

#[cfg(test)]
#[path = "conversion_tests.rs"]
mod tests;
