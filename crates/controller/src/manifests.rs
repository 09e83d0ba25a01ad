//! Creating the objects of YAML manifests (deploy/crd.yaml, deploy/samples/, deploy/sa.yaml,
//! deploy/rbac.yaml) through the typed client: what `kubectl create -f` does, for the few kinds
//! `--embedded` and the e2e tests need.
//!
//! The kinds are dispatched by `apiVersion`/`kind` to typed clients rather than through discovery,
//! so an unexpected kind is an error naming the file, not a silent skip. Objects that already exist
//! are left as they are, so installing twice (a real cluster used by several test runs) is fine.
//! CustomResourceDefinitions are taken as `apiextensions.k8s.io/v1` or `v1beta1` (servers before
//! 1.16); [`crd::crd_manifest`] picks the file a server takes, by discovery.

use std::path::{Path, PathBuf};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kubegen_api::police::v1beta1::WhiteList;
use kubegen_client::{ApiObject, Client, CreateOptions, ResourceClient};
use serde::Deserialize as _;
use serde_json::Value;

use crate::crd::{self, CustomResourceDefinitionV1beta1};
pub use crate::error::ManifestError;

/// Creates every object of every `*.yaml` file in `paths` (files, or directories read in name
/// order), in order; returns one `Kind namespace/name` line per object created now.
///
/// # Errors
/// The first [`ManifestError`].
pub async fn apply(client: &Client, paths: &[PathBuf]) -> Result<Vec<String>, ManifestError> {
    let mut created = Vec::new();
    for file in yaml_files(paths)? {
        for document in documents(&file)? {
            if let Some(line) = create(client, &file, document).await? {
                created.push(line);
            }
        }
    }
    Ok(created)
}

/// Creates one object given as JSON (`apiVersion`, `kind`, `metadata`, ...), of a kind [`apply`]
/// supports; returns its `Kind namespace/name`, or `None` if it already existed.
///
/// # Errors
/// [`ManifestError::Unreadable`] for an unsupported kind or bad shape, [`ManifestError::Rejected`]
/// when the server refuses it.
pub async fn create_object(
    client: &Client,
    object: Value,
) -> Result<Option<String>, ManifestError> {
    create(client, Path::new("<inline>"), object).await
}

fn yaml_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ManifestError> {
    let mut files = Vec::new();
    for path in paths {
        if !path.is_dir() {
            files.push(path.clone());
            continue;
        }
        let unreadable = |e: std::io::Error| ManifestError::Unreadable {
            file: path.clone(),
            reason: e.to_string(),
        };
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(unreadable)?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension()
                    .is_some_and(|ext| ext == "yaml" || ext == "yml")
            })
            .collect();
        entries.sort();
        files.extend(entries);
    }
    Ok(files)
}

pub(crate) fn documents(file: &Path) -> Result<Vec<Value>, ManifestError> {
    let unreadable = |reason: String| ManifestError::Unreadable {
        file: file.to_path_buf(),
        reason,
    };
    let text = std::fs::read_to_string(file).map_err(|e| unreadable(e.to_string()))?;
    let mut out = Vec::new();
    for document in serde_yaml::Deserializer::from_str(&text) {
        let value = Value::deserialize(document).map_err(|e| unreadable(e.to_string()))?;
        if !value.is_null() {
            out.push(value);
        }
    }
    Ok(out)
}

async fn create(
    client: &Client,
    file: &Path,
    document: Value,
) -> Result<Option<String>, ManifestError> {
    let api_version = document["apiVersion"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let kind = document["kind"].as_str().unwrap_or_default().to_owned();
    match (api_version.as_str(), kind.as_str()) {
        ("v1", "Namespace") => create_typed::<Namespace>(client, file, document).await,
        ("v1", "ServiceAccount") => create_typed::<ServiceAccount>(client, file, document).await,
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => {
            create_typed::<ClusterRole>(client, file, document).await
        }
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => {
            create_typed::<ClusterRoleBinding>(client, file, document).await
        }
        ("rbac.authorization.k8s.io/v1", "Role") => {
            create_typed::<Role>(client, file, document).await
        }
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => {
            create_typed::<RoleBinding>(client, file, document).await
        }
        ("apps/v1", "Deployment") => create_typed::<Deployment>(client, file, document).await,
        ("police.example.com/v1beta1", "WhiteList") => {
            create_typed::<WhiteList>(client, file, document).await
        }
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition") => {
            let name = document["metadata"]["name"].as_str().unwrap_or_default();
            let name = name.to_owned();
            let created = create_typed::<CustomResourceDefinition>(client, file, document).await?;
            crd::wait_established(client, &name, crd::v1_established).await?;
            Ok(created)
        }
        ("apiextensions.k8s.io/v1beta1", "CustomResourceDefinition") => {
            let name = document["metadata"]["name"].as_str().unwrap_or_default();
            let name = name.to_owned();
            let created =
                create_typed::<CustomResourceDefinitionV1beta1>(client, file, document).await?;
            crd::wait_established(client, &name, crd::v1beta1_established).await?;
            Ok(created)
        }
        _ => Err(ManifestError::Unreadable {
            file: file.to_path_buf(),
            reason: format!("unsupported object {api_version} {kind}"),
        }),
    }
}

async fn create_typed<K>(
    client: &Client,
    file: &Path,
    document: Value,
) -> Result<Option<String>, ManifestError>
where
    K: ApiObject,
{
    let object: K = serde_json::from_value(document).map_err(|e| ManifestError::Unreadable {
        file: file.to_path_buf(),
        reason: e.to_string(),
    })?;
    let namespace = object.meta().namespace.clone();
    let name = object.meta().name.clone().unwrap_or_default();
    let described = match &namespace {
        Some(ns) => format!("{} {ns}/{name}", K::kind(&())),
        None => format!("{} {name}", K::kind(&())),
    };
    let resources = match &namespace {
        Some(ns) => ResourceClient::<K>::namespaced(client.clone(), ns),
        None => ResourceClient::<K>::cluster(client.clone()),
    };
    match resources.create(&object, &CreateOptions::default()).await {
        Ok(_) => Ok(Some(described)),
        Err(error) if error.is_already_exists() => Ok(None),
        Err(source) => Err(ManifestError::Rejected {
            file: file.to_path_buf(),
            object: described,
            source: Box::new(source),
        }),
    }
}

// The tests reach the in-process server through `embedded::client_for`.
#[cfg(all(test, feature = "embedded"))]
mod tests {
    use kubegen_testserver::TestServer;

    use super::*;

    fn client_for(server: &TestServer) -> Client {
        crate::embedded::client_for(server).unwrap_or_else(|e| panic!("{e}"))
    }

    fn deploy(path: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../deploy")
            .join(path)
    }

    #[tokio::test]
    async fn crds_and_samples_install_once_and_again_without_error() {
        let server = TestServer::start().await;
        let client = client_for(&server);
        let paths = [deploy("crd.yaml"), deploy("samples")];
        let created = apply(&client, &paths)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            created.contains(&"WhiteList police-demo/allowed-images".to_owned()),
            "{created:?}"
        );
        assert!(
            created.contains(&"Deployment police-demo/cache-forbidden".to_owned()),
            "{created:?}"
        );
        let again = apply(&client, &paths)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(again, Vec::<String>::new());
    }

    #[tokio::test]
    async fn an_unknown_kind_is_an_error_naming_the_file() {
        let dir =
            std::env::temp_dir().join(format!("image-police-manifest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let file = dir.join("x.yaml");
        std::fs::write(&file, "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let server = TestServer::start().await;
        let client = client_for(&server);
        let error = apply(&client, std::slice::from_ref(&file))
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            error.contains("x.yaml") && error.contains("unsupported object v1 Secret"),
            "{error}"
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
