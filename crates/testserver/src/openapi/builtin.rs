//! The built-in kinds' OpenAPI documents, shipped as data: `openapi/builtin.json.gz` in this crate
//! holds a real kube-apiserver's own `/openapi/v2` and `/openapi/v3/<path>` documents, trimmed by
//! `hack/update-openapi-data.py` to the resources this server serves (see that script for the
//! source and the layout).
//!
//! # Why data, not code
//! The schemas must be the upstream ones, descriptions, patch strategies and list types included,
//! or `kubectl explain` and `kubectl apply` would disagree with a real cluster; no crate ships them
//! (k8s-openapi has the types but not the schemas), so the documents the real server builds are
//! the well-kept source.
//!
//! # Cost
//! The bundle is decompressed and parsed once per process, on the first request that needs it
//! (~30 ms), never at server start, so `image-police --embedded` starts as fast as before.

use bytes::Bytes;
use std::collections::BTreeMap;
use std::io::Read;
use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::status::ApiError;

/// The bundle, gzip-compressed JSON.
const BUNDLE: &[u8] = include_bytes!("../../openapi/builtin.json.gz");

/// The shipped documents, parsed.
#[derive(Debug)]
pub(crate) struct Builtin {
    /// The `/openapi/v2` (Swagger 2.0) document.
    pub(crate) v2: Value,
    /// `/openapi/v3/<path>` documents by path (`api/v1`, `apis/apps/v1`, `apis`, ...).
    pub(crate) v3: BTreeMap<String, Document>,
    /// The schemas besides its own kinds that the real server puts in a custom resource's v3
    /// document (ObjectMeta, Status, Patch, DeleteOptions, Scale, ...), from a template CRD's.
    pub(crate) meta: Map<String, Value>,
    /// The paths the real server publishes for a template CRD of each scope (`Namespaced`,
    /// `Cluster`), each as `{"v2": paths, "v3": paths}`; see `paths.rs`.
    pub(crate) crd_templates: Value,
}

/// The parsed bundle, loaded on first use.
///
/// # Errors
/// 500 when the bundle compiled into the binary is unreadable (a broken build).
pub(crate) fn get() -> Result<&'static Builtin, ApiError> {
    static CELL: OnceLock<Result<Builtin, String>> = OnceLock::new();
    CELL.get_or_init(|| load(BUNDLE))
        .as_ref()
        .map_err(|e| ApiError::internal(format!("the built-in OpenAPI documents: {e}")))
}

fn load(compressed: &[u8]) -> Result<Builtin, String> {
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(compressed)
        .read_to_end(&mut text)
        .map_err(|e| format!("cannot decompress: {e}"))?;
    let mut bundle: Value = serde_json::from_slice(&text).map_err(|e| format!("not JSON: {e}"))?;
    let v2 = bundle["v2"].take();
    let crd_templates = bundle["crdTemplates"].take();
    let Value::Object(v3) = bundle["v3"].take() else {
        return Err("no v3 documents".into());
    };
    if !v2.is_object() || !crd_templates.is_object() {
        return Err("no v2 document or CRD templates".into());
    }
    let Value::Object(meta) = crd_templates["Namespaced"]["v3Schemas"].clone() else {
        return Err("no CRD template schemas".into());
    };
    let v3 = v3
        .into_iter()
        .map(|(path, doc)| (path, Document::new(doc)))
        .collect();
    Ok(Builtin {
        v2,
        v3,
        meta,
        crd_templates,
    })
}

/// One served document with its serialized form and hash.
#[derive(Clone, Debug)]
pub(crate) struct Document {
    pub(crate) value: Value,
    pub(crate) bytes: Bytes,
    /// Upper-case hex SHA-512 of `bytes` (kube-openapi `computeETag`).
    pub(crate) hash: String,
}

impl Document {
    pub(crate) fn new(value: Value) -> Document {
        let bytes = Bytes::from(value.to_string());
        let digest = ring::digest::digest(&ring::digest::SHA512, &bytes);
        let hash = digest.as_ref().iter().map(|b| format!("{b:02X}")).collect();
        Document { value, bytes, hash }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    #[test]
    fn every_builtin_kind_has_a_schema_and_a_patch_operation() {
        let builtin = get().unwrap();
        for def in Registry::with_builtins().all() {
            let path = if def.group.is_empty() {
                "api/v1".to_string()
            } else {
                format!("apis/{}/{}", def.group, def.version)
            };
            let doc = &builtin.v3[&path].value;
            let gvk =
                serde_json::json!({"group": def.group, "version": def.version, "kind": def.kind});
            let schemas = doc["components"]["schemas"].as_object().unwrap();
            assert!(
                schemas
                    .values()
                    .any(|s| s["x-kubernetes-group-version-kind"]
                        .as_array()
                        .is_some_and(|a| a.contains(&gvk))),
                "{path} {}",
                def.kind
            );
            assert!(
                doc["paths"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .any(|p| p.ends_with(&format!("/{}", def.plural))
                        || p.contains(&format!("/{}/", def.plural))),
                "{path} {}",
                def.plural
            );
        }
    }

    #[test]
    fn unserved_resources_are_trimmed_away() {
        let builtin = get().unwrap();
        let core = builtin.v3["api/v1"].value["paths"].as_object().unwrap();
        assert!(
            core.keys()
                .any(|p| p == "/api/v1/namespaces/{namespace}/configmaps")
        );
        assert!(
            !core
                .keys()
                .any(|p| p.contains("persistentvolumes") || p.ends_with("/exec"))
        );
        let v2_paths = builtin.v2["paths"].as_object().unwrap();
        assert!(v2_paths.contains_key("/apis/apps/v1/namespaces/{namespace}/deployments"));
        assert!(
            !v2_paths
                .keys()
                .any(|p| p.starts_with("/apis/networking.k8s.io"))
        );
    }

    #[test]
    fn meta_schemas_include_object_meta() {
        let meta = &get().unwrap().meta;
        assert!(meta.contains_key("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"));
        assert!(meta.contains_key("io.k8s.api.autoscaling.v1.Scale"));
    }

    #[test]
    fn a_corrupt_bundle_is_an_error_not_a_panic() {
        assert!(
            load(b"not gzip")
                .unwrap_err()
                .starts_with("cannot decompress")
        );
    }
}
