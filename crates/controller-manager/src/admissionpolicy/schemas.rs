//! The kinds and schemas one policy's check needs, asked of the server (apiserver
//! `pkg/cel/openapi/resolver/discovery.go`, `ClientDiscoveryResolver`): a resource's kind from
//! discovery, a kind's schema from the `/openapi/v3` document of its group version, each document
//! read once per check.

use std::collections::HashMap;

use bytes::Bytes;
use kubegen_apiextensions::kind_schema;
use kubegen_client::{Client, RestMapper};
use serde_json::Value;

use super::typecheck::{Kind, Resource};

/// The lookups of one policy's check.
pub(super) struct Schemas<'a> {
    client: &'a Client,
    mapper: &'a RestMapper,
    /// Whether discovery was read again already (at most once per policy, as v1.36 does).
    refreshed: bool,
    /// `/openapi/v3` (its `paths`), once read.
    paths: Option<Value>,
    /// Group-version documents by path (`apis/apps/v1`), `None` when unreadable.
    documents: HashMap<String, Option<Value>>,
}

impl<'a> Schemas<'a> {
    pub(super) fn new(client: &'a Client, mapper: &'a RestMapper) -> Self {
        Schemas {
            client,
            mapper,
            refreshed: false,
            paths: None,
            documents: HashMap::new(),
        }
    }

    /// The kind served at `resource`, `None` when discovery does not list it.
    pub(super) async fn kind_of(&mut self, resource: &Resource) -> Option<Kind> {
        if let Some(kind) = self.find(resource).await {
            return Some(kind);
        }
        if self.refreshed {
            return None;
        }
        self.refreshed = true;
        self.mapper.reset().await;
        self.find(resource).await
    }

    async fn find(&self, resource: &Resource) -> Option<Kind> {
        let mappings = self.mapper.all().await.ok()?;
        mappings
            .iter()
            .map(|mapping| &mapping.resource)
            .find(|served| {
                served.group == resource.group
                    && served.version == resource.version
                    && served.plural == resource.plural
            })
            .map(|served| Kind {
                group: served.group.clone(),
                version: served.version.clone(),
                kind: served.kind.clone(),
            })
    }

    /// The schema of `kind`, references filled in; `None` when the server publishes none.
    pub(super) async fn schema_of(&mut self, kind: &Kind) -> Option<Value> {
        let path = match kind.group.as_str() {
            "" => format!("api/{}", kind.version),
            group => format!("apis/{group}/{}", kind.version),
        };
        if !self.documents.contains_key(&path) {
            let document = self.document(&path).await;
            self.documents.insert(path.clone(), document);
        }
        let document = self.documents.get(&path)?.as_ref()?;
        kind_schema(document, &kind.group, &kind.version, &kind.kind)
    }

    /// The `/openapi/v3` document of `path`, through the URL the index gives it.
    async fn document(&mut self, path: &str) -> Option<Value> {
        if self.paths.is_none() {
            self.paths = Some(self.get("/openapi/v3").await?);
        }
        let url = self.paths.as_ref()?["paths"][path]["serverRelativeURL"].as_str()?;
        let url = url.to_owned();
        self.get(&url).await
    }

    async fn get(&self, url: &str) -> Option<Value> {
        let request = http::Request::get(url)
            .header(http::header::ACCEPT, "application/json")
            .body(Bytes::new())
            .ok()?;
        match self.client.request_json(request).await {
            Ok(document) => Some(document),
            Err(e) => {
                tracing::debug!(url, error = %e, "validatingadmissionpolicy-status: no schema");
                None
            }
        }
    }
}
