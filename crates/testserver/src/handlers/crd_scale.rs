//! The `scale` subresource of a custom resource whose CRD serves several versions, in the
//! version the request names: apiextensions-apiserver serves a `ScaleREST` per version, with
//! that version's `specReplicasPath`, `statusReplicasPath` and `labelSelectorPath` (a v1 CRD
//! gives each version its own), over the object converted to it.
//!
//! # How
//! A get converts the stored object to the request's version R and reads the Scale there
//! (`crate::handlers::scale::scale_of`). A put or a patch is an update of the object in R
//! (`crate::handlers::crd_write`): the Scale's replicas written at R's path of the object
//! converted to R, validated in R with the object's rules (a v2-only maximum or transition
//! rule holds for a scale in v2), converted back to the storage version to be stored, and
//! recorded as the writer's `Update` entry `subresource: scale` in R — the replicas field leaves the entries of
//! the managers who set it, in each one's version, as structured-merge-diff's `ScaleHandler`
//! moves it; scale entries carry no `time`, as there. The answer is the Scale of the stored
//! object converted to R.
//!
//! # Differences from the real server
//! Admission webhooks whose rules name `<plural>/scale` get the custom resource, where v1.36
//! sends them the Scale.

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode, header};
use http_body_util::BodyExt as _;
use serde_json::Value;

use crate::body::{BoxBody, json_response};
use crate::handlers::crd_conversion::Edge;
use crate::handlers::scale::{self, scale_of};
use crate::request::route::existing;
use crate::request::verb::Verb;
use crate::status::ApiError;
use crate::storage::Storage;

impl Edge {
    /// `GET|PUT|PATCH .../<plural>/<name>/scale` in the request's version.
    ///
    /// # Errors
    /// 404 for a missing object or a version without `scale`; the write's; a failed
    /// conversion's 500.
    pub(crate) async fn scale(
        &self,
        store: &Storage,
        headers: &HeaderMap,
        body: &Bytes,
    ) -> Result<Response<BoxBody>, ApiError> {
        let scope = &self.request_scope;
        let paths = scale::paths(scope)?;
        let (warnings, stored) = if scope.verb == Verb::Get {
            let stored = existing(&store.lock(), &self.storage_scope)?
                .0
                .value
                .clone();
            (Vec::new(), (*stored).clone())
        } else {
            let (parts, body) = self.write(store, headers, body).await?.into_parts();
            let warnings = parts.headers.get_all(header::WARNING).iter().cloned();
            let bytes = body
                .collect()
                .await
                .map(|c| c.to_bytes())
                .unwrap_or_default();
            let stored = serde_json::from_slice(&bytes)
                .map_err(|e| ApiError::internal(format!("the stored object: {e}")))?;
            (warnings.collect(), stored)
        };
        let object: Value = self
            .versions
            .convert_one(stored, self.request_version())
            .await?;
        let scale = scale_of(&scope.def, &paths, &object)?;
        let mut answer = json_response(StatusCode::OK, Bytes::from(scale.to_string()));
        for warning in warnings {
            answer.headers_mut().append(header::WARNING, warning);
        }
        Ok(answer)
    }
}
