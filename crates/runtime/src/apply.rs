//! Applying a multi-document YAML of any kinds, as `kubectl apply --server-side -f` does: the
//! library function behind an operator's "install my CRDs and defaults", a test's fixtures or a
//! GitOps step.
//!
//! # Why here
//! Discovery and the [`RestMapper`] are the client's (`kubegen_client::discovery`): any program
//! talking to a server needs them. Applying manifests is a workflow on top (document order, CRDs
//! before their objects, waiting for `Established`, falling back on old servers) and sits beside
//! [`manifests`], which creates manifests and shares its YAML reading and CRD
//! waiting with this module.
//!
//! # What happens
//! 1. Every document is read first (`apiVersion`, `kind`, `metadata.name` required); a bad one is
//!    an error naming its position before anything is sent.
//! 2. CustomResourceDefinitions (`apiextensions.k8s.io`, any version) go first, in file order,
//!    and each is waited for until `Established`; then the other documents, in file order. A
//!    kind discovery does not list is looked up again for a few seconds, as a CRD just
//!    established may not be in (aggregated) discovery yet: v1.36 takes about a second.
//! 3. Each object is applied with server-side apply (`PATCH`,
//!    `application/apply-patch+yaml`, the given field manager and `force`). A server without it
//!    (before 1.16; it answers 415) gets create-or-update instead: `POST`, and when the object
//!    exists a JSON merge patch of the document onto it (so fields set by others survive, as
//!    with apply). The fallback is chosen once, at the first 415.
//!
//! # Errors
//! [`Error::DocumentFailed`] names the source, the document's position (1-based, in the file),
//! its `Kind namespace/name`, and carries the client's error (a kind the server does not serve:
//! [`kubegen_client::Error::NoKindMatch`]; a conflict with another manager: `is_conflict()`).
//! Documents before the failing one stay applied.

use std::path::Path;

use kubegen_client::{
    ApplyOptions, Client, CreateOptions, DynamicObject, Patch, PatchOptions, ResourceClient,
    RestMapper,
};
use serde_json::Value;

use crate::error::Error;
use crate::manifests::{self, served_mapping, unreadable, wait_established};

/// What applying one document did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Server-side apply (created or updated: the server does not say which).
    Applied,
    /// Created (fallback for servers without server-side apply).
    Created,
    /// Merge-patched onto the existing object (the same fallback).
    Updated,
}

/// One applied document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    /// Its position in the YAML, from 1.
    pub index: usize,
    /// `Kind namespace/name`, or `Kind name` when cluster-scoped.
    pub object: String,
    /// What was done.
    pub outcome: Outcome,
}

/// One document, read.
struct Document {
    index: usize,
    api_version: String,
    kind: String,
    name: String,
    body: Value,
}

impl Document {
    fn is_crd(&self) -> bool {
        self.kind == "CustomResourceDefinition"
            && self.api_version.starts_with("apiextensions.k8s.io/")
    }
}

fn read(source: &Path, yaml: &str) -> Result<Vec<Document>, Error> {
    let mut out = Vec::new();
    for (at, body) in manifests::documents(source, yaml)?.into_iter().enumerate() {
        let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
        let (api_version, kind) = (text(&body["apiVersion"]), text(&body["kind"]));
        let name = text(&body["metadata"]["name"]);
        if api_version.is_empty() || kind.is_empty() || name.is_empty() {
            let reason = format!(
                "document {} has no apiVersion, kind or metadata.name",
                at + 1
            );
            return Err(unreadable(source, reason));
        }
        out.push(Document {
            index: at + 1,
            api_version,
            kind,
            name,
            body,
        });
    }
    Ok(out)
}

/// Applies every document of `yaml` (named `source` in errors) through `client`, kinds mapped
/// by `mapper`, as `options` say (field manager, force, dry run); returns one [`Applied`] per
/// document, CRDs first (see the module doc).
///
/// # Errors
/// [`Error::ManifestUnreadable`] for YAML that does not parse or a document without
/// `apiVersion`, `kind` or `metadata.name`; [`Error::DocumentFailed`] for a document the server
/// does not take; [`Error::NotEstablished`] for a CRD not served in time.
pub async fn apply_yaml(
    client: &Client,
    mapper: &RestMapper,
    source: &str,
    yaml: &str,
    options: &ApplyOptions,
) -> Result<Vec<Applied>, Error> {
    let source = Path::new(source);
    let (crds, others): (Vec<Document>, Vec<Document>) =
        read(source, yaml)?.into_iter().partition(Document::is_crd);
    let mut applier = Applier {
        client,
        mapper,
        source,
        options,
        server_side: true,
    };
    let mut applied = Vec::new();
    for crd in &crds {
        applied.push(applier.apply(crd).await?);
        if !options.dry_run {
            let path =
                manifests::collection_path(&crd.api_version, None, "customresourcedefinitions");
            wait_established(client, &format!("{path}/{}", crd.name), &crd.name).await?;
        }
    }
    if !crds.is_empty() {
        mapper.reset().await;
    }
    for document in &others {
        applied.push(applier.apply(document).await?);
    }
    Ok(applied)
}

/// Applies documents one by one, remembering whether the server has server-side apply.
struct Applier<'a> {
    client: &'a Client,
    mapper: &'a RestMapper,
    source: &'a Path,
    options: &'a ApplyOptions,
    /// Cleared at the first 415 to an apply patch.
    server_side: bool,
}

impl Applier<'_> {
    async fn apply(&mut self, document: &Document) -> Result<Applied, Error> {
        let mut described = format!("{} {}", document.kind, document.name);
        let failed = |object: &str, e: kubegen_client::Error| Error::DocumentFailed {
            file: self.source.to_path_buf(),
            index: document.index,
            object: object.to_owned(),
            source: Box::new(e),
        };
        let mapping = served_mapping(self.mapper, &document.api_version, &document.kind)
            .await
            .map_err(|e| failed(&described, e))?;
        let namespace = mapping.namespaced.then(|| {
            document.body["metadata"]["namespace"]
                .as_str()
                .unwrap_or(self.client.default_namespace())
                .to_owned()
        });
        if let Some(namespace) = &namespace {
            described = format!("{} {namespace}/{}", document.kind, document.name);
        }
        let api = ResourceClient::<DynamicObject>::dynamic(
            self.client.clone(),
            &mapping.resource,
            namespace.as_deref(),
        );
        let outcome = self
            .send(&api, document)
            .await
            .map_err(|e| failed(&described, e))?;
        Ok(Applied {
            index: document.index,
            object: described,
            outcome,
        })
    }

    async fn send(
        &mut self,
        api: &ResourceClient<DynamicObject>,
        document: &Document,
    ) -> Result<Outcome, kubegen_client::Error> {
        if self.server_side {
            match api
                .apply(&document.name, &document.body, self.options)
                .await
            {
                Ok(_) => return Ok(Outcome::Applied),
                Err(e) if e.is_apply_unsupported() => self.server_side = false,
                Err(e) => return Err(e),
            }
        }
        let object: DynamicObject = serde_json::from_value(document.body.clone())
            .map_err(|e| kubegen_client::Error::BuildRequest(format!("{}: {e}", document.name)))?;
        let manager = &self.options.field_manager;
        let create = CreateOptions::default()
            .field_manager(manager)
            .dry_run(self.options.dry_run);
        match api.create(&object, &create).await {
            Ok(_) => Ok(Outcome::Created),
            Err(e) if e.is_already_exists() => {
                let patch = PatchOptions::default()
                    .field_manager(manager)
                    .dry_run(self.options.dry_run);
                let merge = Patch::Merge(document.body.clone());
                api.patch(&document.name, &merge, &patch).await?;
                Ok(Outcome::Updated)
            }
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
#[path = "apply_tests.rs"]
mod tests;
