//! Creating the objects of YAML manifests, of any kind the server serves: what
//! `kubectl create -f` does, for an operator installing its CRDs at start-up, a test loading its
//! fixtures, or an embedded server loading samples.
//!
//! # How a document becomes a request
//! `apiVersion` and `kind` are mapped to the resource's URL by a
//! [`RestMapper`] over discovery (aggregated where served), as
//! kubectl does: it names each kind's plural and whether it is namespaced. So a custom resource
//! needs no generated code, and a kind the server does not serve is an error naming the file and
//! the kind, never a silent skip. A namespaced object without a namespace goes to the client's
//! default namespace, as with kubectl. To *apply* manifests (server-side apply, updating what
//! exists) use [`apply`](crate::apply) instead.
//!
//! # Guarantees
//! - Objects are created in document order; one that already exists is left as it is (so
//!   installing twice, or into a cluster several test runs share, is fine).
//! - A created CustomResourceDefinition (`apiextensions.k8s.io/v1` or `v1beta1`) is waited for
//!   until `Established`, so the next document may be an object of its kind. Discovery of a
//!   group version is asked again when a kind is missing from it (a CRD just established).
//!
//! # Differences from kubectl
//! Nothing is updated: this is `create`, not `apply` ([`apply`](crate::apply) is). An installer
//! that overwrites what a cluster's administrator changed is not what a start-up step should do.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use kubegen_client::{CacheOptions, CachedDiscovery, Client, RestMapper, RestMapping};
use serde::Deserialize as _;
use serde_json::Value;

use crate::error::Error;

/// How long a created CRD may take to be served.
const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(30);

/// Creates every object of every `*.yaml`/`*.yml` file in `paths` (files, or directories read in
/// name order), in order; returns one `Kind namespace/name` line per object created now.
///
/// # Errors
/// The first file that cannot be read, kind that is not served, or object the server refuses.
pub async fn create_from_paths(client: &Client, paths: &[PathBuf]) -> Result<Vec<String>, Error> {
    let mut creator = Creator::new(client);
    let mut created = Vec::new();
    for (file, text) in read_yaml_files(paths)? {
        created.extend(creator.create_all(&file, &text).await?);
    }
    Ok(created)
}

/// The text of every `*.yaml`/`*.yml` file in `paths` (files, or directories read in name order),
/// in order, each with its path.
///
/// # Errors
/// [`Error::ManifestUnreadable`] naming the first file or directory that cannot be read.
pub fn read_yaml_files(paths: &[PathBuf]) -> Result<Vec<(PathBuf, String)>, Error> {
    yaml_files(paths)?
        .into_iter()
        .map(|file| {
            let text =
                std::fs::read_to_string(&file).map_err(|e| unreadable(&file, e.to_string()))?;
            Ok((file, text))
        })
        .collect()
}

/// Creates every object of the multi-document YAML `yaml` (named `source` in errors, e.g. the
/// file it came from); returns one `Kind namespace/name` line per object created now.
///
/// # Errors
/// A document that is not an object, a kind that is not served, an object the server refuses.
pub async fn create_from_yaml(
    client: &Client,
    source: &str,
    yaml: &str,
) -> Result<Vec<String>, Error> {
    Creator::new(client)
        .create_all(Path::new(source), yaml)
        .await
}

/// Creates one object given as JSON (`apiVersion`, `kind`, `metadata`, ...); returns its
/// `Kind namespace/name`, or `None` if it already existed.
///
/// # Errors
/// As [`create_from_yaml`].
pub async fn create_object(client: &Client, object: Value) -> Result<Option<String>, Error> {
    Creator::new(client)
        .create(Path::new("<inline>"), object)
        .await
}

/// The objects of a multi-document YAML text, without empty documents.
///
/// # Errors
/// [`Error::ManifestUnreadable`] naming `source` when the YAML does not parse.
pub fn documents(source: &Path, yaml: &str) -> Result<Vec<Value>, Error> {
    let mut out = Vec::new();
    for document in serde_yaml::Deserializer::from_str(yaml) {
        let value = Value::deserialize(document).map_err(|e| unreadable(source, e.to_string()))?;
        if !value.is_null() {
            out.push(value);
        }
    }
    Ok(out)
}

pub(crate) fn unreadable(file: &Path, reason: String) -> Error {
    Error::ManifestUnreadable {
        file: file.to_path_buf(),
        reason,
    }
}

fn yaml_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    let mut files = Vec::new();
    for path in paths {
        if !path.is_dir() {
            files.push(path.clone());
            continue;
        }
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| unreadable(path, e.to_string()))?
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

/// A mapper over memory-only discovery of the server behind `client`.
pub(crate) fn mapper(client: &Client) -> RestMapper {
    RestMapper::new(Arc::new(CachedDiscovery::new(
        client.clone(),
        CacheOptions::default(),
    )))
}

/// Creates objects through one client, mapping kinds through one [`RestMapper`].
struct Creator<'a> {
    client: &'a Client,
    mapper: RestMapper,
}

impl<'a> Creator<'a> {
    fn new(client: &'a Client) -> Creator<'a> {
        Creator {
            client,
            mapper: mapper(client),
        }
    }

    async fn create_all(&mut self, file: &Path, yaml: &str) -> Result<Vec<String>, Error> {
        let mut created = Vec::new();
        for document in documents(file, yaml)? {
            if let Some(line) = self.create(file, document).await? {
                created.push(line);
            }
        }
        Ok(created)
    }

    async fn create(&mut self, file: &Path, object: Value) -> Result<Option<String>, Error> {
        let text = |key: &str| object[key].as_str().unwrap_or_default().to_owned();
        let (api_version, kind) = (text("apiVersion"), text("kind"));
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if api_version.is_empty() || kind.is_empty() || name.is_empty() {
            return Err(unreadable(
                file,
                "a document without apiVersion, kind or metadata.name".to_owned(),
            ));
        }
        let mapping = served_mapping(&self.mapper, &api_version, &kind)
            .await
            .map_err(|e| unreadable(file, e.to_string()))?;
        let namespace = mapping.namespaced.then(|| {
            object["metadata"]["namespace"]
                .as_str()
                .unwrap_or(self.client.default_namespace())
                .to_owned()
        });
        let described = match &namespace {
            Some(namespace) => format!("{kind} {namespace}/{name}"),
            None => format!("{kind} {name}"),
        };
        let collection =
            collection_path(&api_version, namespace.as_deref(), &mapping.resource.plural);
        let body = serde_json::to_vec(&object).map_err(|e| unreadable(file, e.to_string()))?;
        let request = http::Request::post(&collection)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json")
            .body(Bytes::from(body))
            .map_err(|e| unreadable(file, e.to_string()))?;
        match self.client.request_json::<Value>(request).await {
            Ok(_created) => {}
            Err(error) if error.is_already_exists() => return Ok(None),
            Err(source) => {
                return Err(Error::ManifestRejected {
                    file: file.to_path_buf(),
                    object: described,
                    source: Box::new(source),
                });
            }
        }
        if kind == "CustomResourceDefinition" && api_version.starts_with("apiextensions.k8s.io/") {
            wait_established(self.client, &format!("{collection}/{name}"), &name).await?;
        }
        Ok(Some(described))
    }
}

/// The mapping of `kind` in `api_version`; while discovery does not list it, asked again (five
/// times, a second apart), as a CRD just established may not be in discovery yet.
///
/// # Errors
/// The mapper's last error ([`kubegen_client::Error::NoKindMatch`] naming the kind).
pub(crate) async fn served_mapping(
    mapper: &RestMapper,
    api_version: &str,
    kind: &str,
) -> Result<RestMapping, kubegen_client::Error> {
    let mut attempt = 0;
    loop {
        match mapper.mapping_for(api_version, kind).await {
            Err(e) if e.is_no_match() && attempt < 4 => {
                attempt += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
                mapper.reset().await;
            }
            other => return other,
        }
    }
}

/// The collection URL of `plural` in `api_version`, in `namespace` if namespaced.
pub(crate) fn collection_path(api_version: &str, namespace: Option<&str>, plural: &str) -> String {
    let root = if api_version.contains('/') {
        format!("/apis/{api_version}")
    } else {
        format!("/api/{api_version}")
    };
    match namespace {
        Some(namespace) => format!("{root}/namespaces/{namespace}/{plural}"),
        None => format!("{root}/{plural}"),
    }
}

/// A GET of `path` asking for JSON.
pub(crate) fn get(path: &str) -> Result<http::Request<Bytes>, http::Error> {
    http::Request::get(path)
        .header(http::header::ACCEPT, "application/json")
        .body(Bytes::new())
}

/// Polls the CRD at `path` until its `Established` condition is `True`: only then does the
/// server serve its kind. Read as JSON, so `v1` and `v1beta1` CRDs are alike.
pub(crate) async fn wait_established(client: &Client, path: &str, name: &str) -> Result<(), Error> {
    let deadline = tokio::time::Instant::now() + ESTABLISH_TIMEOUT;
    loop {
        if let Some(crd) = get_json(client, path).await
            && established(&crd)
        {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(Error::NotEstablished {
                name: name.to_owned(),
                timeout: ESTABLISH_TIMEOUT,
            });
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn get_json(client: &Client, path: &str) -> Option<Value> {
    client.request_json(get(path).ok()?).await.ok()
}

/// Whether a CRD's `status.conditions` hold `Established=True`.
pub(crate) fn established(crd: &Value) -> bool {
    crd["status"]["conditions"]
        .as_array()
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
        })
}

#[cfg(test)]
#[path = "manifests_tests.rs"]
mod tests;
