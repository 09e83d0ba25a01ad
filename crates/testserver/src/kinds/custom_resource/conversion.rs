//! The versions a CRD serves and the conversion of its objects between them
//! (apiextensions-apiserver `pkg/apiserver/conversion`: `nopConverter` for strategy `None`,
//! `webhookConverter` for `Webhook`).
//!
//! Every served version of a CRD shares the storage version's objects, so whatever reads or
//! writes in another version converts: the request path at its edge
//! (`crate::kinds::custom_resource::edge`), the admission webhooks when a rule matched another
//! version than the request's (`crate::admission::webhook`).
//!
//! - `None`: only `apiVersion` is rewritten.
//! - `Webhook`: a `ConversionReview` in the first of `conversionReviewVersions` this server
//!   speaks (`v1`, `v1beta1`) is POSTed to `clientConfig.url` (with `?timeout=30s`, as the real
//!   server adds, and `caBundle` as the only trusted CA). `clientConfig.service` is dialed as
//!   `https://<name>.<namespace>.svc:<port><path>`, which resolves nowhere outside a cluster:
//!   tests point the CRD at a `url`.
//!
//! # Errors (as v1.36 words them)
//! A refused conversion, an unreachable webhook or a malformed answer is a 500 without reason,
//! `conversion webhook for <group>/<from version>, Kind=<Kind> failed: <why>`.

use bytes::Bytes;
use serde_json::{Value, json};

use crate::registry::{ResourceDefinition, ResourceKey};
use crate::status::ApiError;
use crate::storage::State;
use crate::webhook_client::post;

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

/// The versions of one CRD and how its objects convert between them.
#[derive(Clone, Debug)]
pub(crate) struct CrdVersions {
    group: String,
    kind: String,
    /// The served versions, in the CRD's order (the order kube-apiserver tries equivalent
    /// resources in).
    pub(crate) served: Vec<String>,
    /// The version objects are stored in.
    pub(crate) storage: String,
    strategy: Strategy,
}

impl CrdVersions {
    /// The versions of the CRD that defines `def`; `None` for built-in kinds.
    pub(crate) fn of(state: &State, def: &ResourceDefinition) -> Option<CrdVersions> {
        let crds = ResourceKey::new("apiextensions.k8s.io", "v1", "customresourcedefinitions");
        let name = (String::new(), format!("{}.{}", def.plural, def.group));
        let crd = &state.store.get(&crds, &name)?.value;
        let versions = crd.pointer("/spec/versions")?.as_array()?;
        let name_of = |v: &Value| v["name"].as_str().map(str::to_owned);
        let storage = versions
            .iter()
            .find(|v| v["storage"] == true)
            .and_then(name_of)?;
        let served = versions
            .iter()
            .filter(|v| v["served"] == true)
            .filter_map(name_of)
            .collect();
        Some(CrdVersions {
            group: def.group.clone(),
            kind: def.kind.clone(),
            served,
            storage,
            strategy: strategy(crd.pointer("/spec/conversion")),
        })
    }

    /// `<group>/<version>`.
    pub(crate) fn api_version(&self, version: &str) -> String {
        format!("{}/{version}", self.group)
    }

    /// `object` in `version` (itself when it is in it already).
    ///
    /// # Errors
    /// The conversion failed (see the module docs).
    pub(crate) async fn convert_one(
        &self,
        object: Value,
        version: &str,
    ) -> Result<Value, ApiError> {
        let mut converted = self.convert(vec![object], version).await?;
        Ok(converted.pop().unwrap_or_default())
    }

    /// `objects` (all of one version) in `version`, in one `ConversionReview`.
    ///
    /// # Errors
    /// The conversion failed (see the module docs).
    pub(crate) async fn convert(
        &self,
        objects: Vec<Value>,
        version: &str,
    ) -> Result<Vec<Value>, ApiError> {
        let desired = self.api_version(version);
        let from = objects
            .first()
            .and_then(|o| o.get("apiVersion"))
            .and_then(Value::as_str)
            .unwrap_or(&desired)
            .to_owned();
        if from == desired {
            return Ok(objects);
        }
        let failed = |why: String| {
            let message = format!(
                "conversion webhook for {from}, Kind={} failed: {why}",
                self.kind
            );
            ApiError::unknown(500, message)
        };
        match &self.strategy {
            Strategy::None => Ok(objects
                .into_iter()
                .map(|mut object| {
                    object["apiVersion"] = Value::String(desired.clone());
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
                    .map_or("v1", String::as_str);
                let count = objects.len();
                let url = format!("{url}?timeout=30s");
                let review = (review_version, desired.as_str(), objects);
                let converted = post_conversion_review(&url, ca_bundle.as_deref(), review)
                    .await
                    .map_err(failed)?;
                check(converted, count, &desired).map_err(failed)
            }
        }
    }
}

/// Posts a `ConversionReview` (`apiextensions.k8s.io/<review version>`) asking for the objects in
/// the desired `apiVersion` (apiextensions-apiserver's `webhookConverter.Convert`); returns the
/// converted objects of a successful answer.
///
/// # Errors
/// The post's failure, the answer's `result.message` when it reports a failure, or what is
/// wrong with the answer, worded as v1.36 words them after `conversion webhook for ... failed: `.
async fn post_conversion_review(
    url: &str,
    ca_pem: Option<&[u8]>,
    (review_version, desired, objects): (&str, &str, Vec<Value>),
) -> Result<Vec<Value>, String> {
    let uid = uuid::Uuid::new_v4().to_string();
    let review = json!({
        "kind": "ConversionReview",
        "apiVersion": format!("apiextensions.k8s.io/{review_version}"),
        "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects},
    });
    let answer = post(url, ca_pem, Bytes::from(review.to_string())).await?;
    let answer: Value =
        serde_json::from_slice(&answer).map_err(|e| format!("unmarshal ConversionReview: {e}"))?;
    let response = &answer["response"];
    if response.is_null() {
        return Err("no response provided".into());
    }
    if response["uid"] != uid.as_str() {
        return Err(format!(
            "expected response.uid={uid}, got {}",
            response["uid"].as_str().unwrap_or("")
        ));
    }
    if response["result"]["status"] != "Success" {
        return Err(response["result"]["message"]
            .as_str()
            .unwrap_or("")
            .to_owned());
    }
    Ok(response["convertedObjects"]
        .as_array()
        .cloned()
        .unwrap_or_default())
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
