//! Custom resources in a version other than their CRD's storage version: apiextensions-apiserver's
//! `crdConversionRESTOptionsGetter` and `pkg/apiserver/conversion` (`nopConverter` for strategy
//! `None`, `webhookConverter` for `Webhook`), applied at the edge of the request path.
//!
//! # How
//! Every served version of a CRD shares the storage version's objects. A request in another
//! version runs the handlers *in the storage version* ([`Edge::storage_scope`]); the edge converts
//! the body of a create or update to the storage version before, and every object of the answer
//! (the object, each list item, each watch event's object) to the request's version after. One
//! conversion per request, all of a list's items in one `ConversionReview`, as the real server
//! converts lists.
//!
//! - `None`: only `apiVersion` is rewritten.
//! - `Webhook`: a `ConversionReview` in the first of `conversionReviewVersions` this server
//!   speaks (`v1`, `v1beta1`) is POSTed to `clientConfig.url` (with `?timeout=30s`, as the real
//!   server adds, and `caBundle` as the only trusted CA). `clientConfig.service` is dialed as
//!   `https://<name>.<namespace>.svc:<port><path>`, which resolves nowhere outside a cluster:
//!   tests point the CRD at a `url`.
//!
//! # Failures (as v1.36 answers them, `codegen/generated-tests/.../conversion.rs` checks both
//! real servers)
//! A refused conversion, an unreachable webhook or a malformed answer fail the request with 500,
//! no reason, `conversion webhook for <group>/<from version>, Kind=<Kind> failed: <why>`; a watch
//! ends with that Status as an `ERROR` event.
//!
//! # Differences from the real server
//! - Patches (and server-side apply) in a non-storage version apply to the stored object, in the
//!   storage version's field names: right for `None` and for fields both versions spell alike.
//! - v1.36 answers a *list* with 429 `storage is (re)initializing` while its watch cache cannot
//!   convert; this server answers it like a get (500).
//! - Table answers use the request version's printer columns on the stored object, before any
//!   conversion.

use std::sync::Arc;

use bytes::Bytes;
use http::Response;
use http_body_util::BodyExt as _;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::admission::webhook::post_conversion_review;
use crate::body::{BoxBody, ChannelBody};
use crate::registry::{ResourceDefinition, ResourceKey};
use crate::request::scope::Scope;
use crate::status::ApiError;
use crate::storage::Storage;

/// How a CRD converts: its `spec.conversion`.
#[derive(Clone, Debug)]
enum Strategy {
    /// `None` (or no `conversion`): `apiVersion` is rewritten.
    None,
    /// `Webhook`: where to post, what to trust, which review versions the webhook takes.
    Webhook {
        url: String,
        ca_bundle: Option<Vec<u8>>,
        review_versions: Vec<String>,
    },
}

/// A request in a non-storage version: the scope the handlers run with and the way back and forth.
pub(crate) struct Edge {
    /// The request's scope, its definition moved to the storage version: what the handlers run
    /// with.
    pub(crate) storage_scope: Scope,
    /// `group/version` of the request.
    request_version: String,
    /// `group/version` objects are stored in.
    storage_version: String,
    kind: String,
    strategy: Strategy,
}

impl Edge {
    /// The edge of a request for a custom resource in a version that is not its CRD's storage
    /// version; `None` for everything else.
    pub(crate) fn for_scope(storage: &Storage, scope: &Scope) -> Option<Edge> {
        let def = &scope.def;
        let crds = ResourceKey::new("apiextensions.k8s.io", "v1", "customresourcedefinitions");
        let state = storage.lock();
        let name = (String::new(), format!("{}.{}", def.plural, def.group));
        let crd = &state.store.get(&crds, &name)?.value;
        let versions = crd.pointer("/spec/versions")?.as_array()?;
        let stored = versions.iter().find(|v| v["storage"] == true)?["name"]
            .as_str()?
            .to_owned();
        if stored == def.version {
            return None;
        }
        let strategy = strategy(crd.pointer("/spec/conversion"));
        drop(state);
        // The request's definition (its printer columns, subresources), stored in the storage
        // version: its key and `apiVersion` are the storage version's.
        let storage_def = ResourceDefinition {
            version: stored,
            ..(**def).clone()
        };
        let mut storage_scope = scope.clone();
        storage_scope.target.def = Arc::new(storage_def);
        Some(Edge {
            storage_version: storage_scope.def.api_version(),
            storage_scope,
            request_version: def.api_version(),
            kind: def.kind.clone(),
            strategy,
        })
    }

    /// A create's or update's body, in the storage version.
    ///
    /// # Errors
    /// The body is not JSON, or its conversion failed.
    pub(crate) async fn request_body(&self, body: Bytes) -> Result<Bytes, ApiError> {
        let object: Value = serde_json::from_slice(&body)
            .map_err(|e| ApiError::bad_request(format!("the body is not JSON: {e}")))?;
        if object.get("apiVersion").and_then(Value::as_str) != Some(&self.request_version) {
            // Not this kind in this version: the handler answers it as it would.
            return Ok(body);
        }
        let mut converted = self.convert(vec![object], &self.storage_version).await?;
        let object = converted.pop().unwrap_or_default();
        Ok(Bytes::from(object.to_string()))
    }

    /// The handler's answer with every object of this kind in the request's version.
    ///
    /// # Errors
    /// The conversion failed (a watch reports it as an `ERROR` event instead).
    pub(crate) async fn response(
        self,
        response: Response<BoxBody>,
        watch: bool,
    ) -> Result<Response<BoxBody>, ApiError> {
        let (parts, body) = response.into_parts();
        if watch {
            let (tx, rx) = mpsc::channel(16);
            tokio::spawn(self.events(body, tx));
            return Ok(Response::from_parts(parts, ChannelBody::boxed(rx)));
        }
        let bytes = body
            .collect()
            .await
            .map(|c| c.to_bytes())
            .unwrap_or_default();
        let Ok(mut value) = serde_json::from_slice::<Value>(&bytes) else {
            return Ok(Response::from_parts(parts, crate::body::full(bytes)));
        };
        self.convert_answer(&mut value).await?;
        Ok(Response::from_parts(
            parts,
            crate::body::full(Bytes::from(value.to_string())),
        ))
    }

    /// Converts an object of this kind, or each item of a list of it, in place.
    async fn convert_answer(&self, value: &mut Value) -> Result<(), ApiError> {
        let kind = value.get("kind").and_then(Value::as_str).unwrap_or("");
        if kind == self.kind {
            let object = value.take();
            let mut converted = self.convert(vec![object], &self.request_version).await?;
            *value = converted.pop().unwrap_or_default();
        } else if kind == format!("{}List", self.kind) {
            let items = value["items"].take();
            let items = items.as_array().cloned().unwrap_or_default();
            value["items"] = Value::Array(self.convert(items, &self.request_version).await?);
            value["apiVersion"] = Value::String(self.request_version.clone());
        }
        Ok(())
    }

    /// Rewrites a watch stream line by line; a failed conversion ends it with an `ERROR` event.
    async fn events(self, mut body: BoxBody, tx: mpsc::Sender<Bytes>) {
        let mut pending: Vec<u8> = Vec::new();
        while let Some(Ok(frame)) = body.frame().await {
            let Ok(data) = frame.into_data() else {
                continue;
            };
            pending.extend_from_slice(&data);
            while let Some(end) = pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = pending.drain(..=end).collect();
                let (out, failed) = self.event(&line).await;
                if tx.send(out).await.is_err() || failed {
                    return;
                }
            }
        }
    }

    /// One watch event line, converted; `true` when it is the `ERROR` of a failed conversion.
    async fn event(&self, line: &[u8]) -> (Bytes, bool) {
        let Ok(mut event) = serde_json::from_slice::<Value>(line) else {
            return (Bytes::copy_from_slice(line), false);
        };
        match self.convert_answer(&mut event["object"]).await {
            Ok(()) => (Bytes::from(format!("{event}\n")), false),
            Err(error) => {
                let status: Value = serde_json::from_slice(&error.to_json()).unwrap_or_default();
                let event = json!({"type": "ERROR", "object": status});
                (Bytes::from(format!("{event}\n")), true)
            }
        }
    }

    /// `objects` (all of one version) in `desired`.
    async fn convert(&self, objects: Vec<Value>, desired: &str) -> Result<Vec<Value>, ApiError> {
        let from = objects
            .first()
            .and_then(|o| o.get("apiVersion"))
            .and_then(Value::as_str)
            .unwrap_or(desired)
            .to_owned();
        if from == desired || objects.is_empty() {
            return Ok(objects);
        }
        let failed = |why: String| {
            ApiError::unknown(
                500,
                format!(
                    "conversion webhook for {from}, Kind={} failed: {why}",
                    self.kind
                ),
            )
        };
        match &self.strategy {
            Strategy::None => Ok(objects
                .into_iter()
                .map(|mut object| {
                    object["apiVersion"] = Value::String(desired.to_owned());
                    object
                })
                .collect()),
            Strategy::Webhook {
                url,
                ca_bundle,
                review_versions,
            } => {
                let review_version = review_versions
                    .iter()
                    .find(|v| *v == "v1" || *v == "v1beta1")
                    .cloned()
                    .unwrap_or_else(|| "v1".to_owned());
                let count = objects.len();
                let converted = post_conversion_review(
                    &format!("{url}?timeout=30s"),
                    ca_bundle.as_deref(),
                    &review_version,
                    desired,
                    objects,
                )
                .await
                .map_err(failed)?;
                check(converted, count, desired).map_err(failed)
            }
        }
    }
}

/// The webhook's objects, if they are as many as asked and all in `desired`.
fn check(converted: Vec<Value>, count: usize, desired: &str) -> Result<Vec<Value>, String> {
    if converted.len() != count {
        return Err(format!(
            "conversion webhook response was incomplete: expected {count} objects, got {}",
            converted.len()
        ));
    }
    if let Some(wrong) = converted
        .iter()
        .find(|o| o.get("apiVersion").and_then(Value::as_str) != Some(desired))
    {
        return Err(format!(
            "invalid converted object apiVersion: expected {desired}, got {}",
            wrong
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or("")
        ));
    }
    Ok(converted)
}

/// A CRD's `spec.conversion` (v1 layout).
fn strategy(conversion: Option<&Value>) -> Strategy {
    let Some(conversion) = conversion.filter(|c| c["strategy"] == "Webhook") else {
        return Strategy::None;
    };
    let webhook = &conversion["webhook"];
    let config = &webhook["clientConfig"];
    let url = config["url"].as_str().map_or_else(
        || {
            let service = &config["service"];
            format!(
                "https://{}.{}.svc:{}{}",
                service["name"].as_str().unwrap_or(""),
                service["namespace"].as_str().unwrap_or(""),
                service["port"].as_u64().unwrap_or(443),
                service["path"].as_str().unwrap_or("")
            )
        },
        str::to_owned,
    );
    let ca_bundle = config["caBundle"].as_str().and_then(|b64| {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.decode(b64).ok()
    });
    let review_versions = webhook["conversionReviewVersions"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Strategy::Webhook {
        url,
        ca_bundle,
        review_versions,
    }
}
