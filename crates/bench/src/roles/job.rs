//! What a child process is asked to measure: the client ([`Role`]), the objects ([`Dataset`]) and
//! the server ([`Job`]), below the roles that run it and the runner that hands it over.

use std::fmt::Debug;
use std::path::PathBuf;
use std::str::FromStr;

use anyhow::{Result, bail};
use serde::de::DeserializeOwned;

use crate::http::RawClient;

/// Which client a child process measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// kubegen's informer, JSON on the wire.
    Kubegen,
    /// kubegen's informer, protobuf on the wire.
    KubegenProtobuf,
    /// kubegen's metadata-only informer.
    KubegenMetadata,
    /// kube-rs's reflector.
    KubeRs,
    /// kube-rs's reflector, `any_semantic()` and unpaged.
    KubeRsAny,
    /// kube-rs's reflector over its `metadata_watcher`, `any_semantic()` and unpaged.
    KubeRsMetadata,
    /// client-go's informer (`cgbench`), JSON.
    ClientGo,
    /// client-go's informer, protobuf.
    ClientGoProtobuf,
    /// client-go's metadata-only informer.
    ClientGoMetadata,
    /// The serde_json decode floor.
    Floor,
    /// The raw transfer baseline.
    Raw,
}

impl Role {
    /// Every role, in table order.
    pub const ALL: [Role; 11] = [
        Role::Raw,
        Role::Floor,
        Role::ClientGo,
        Role::ClientGoProtobuf,
        Role::ClientGoMetadata,
        Role::KubeRs,
        Role::KubeRsAny,
        Role::KubeRsMetadata,
        Role::Kubegen,
        Role::KubegenProtobuf,
        Role::KubegenMetadata,
    ];

    /// The command-line spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Kubegen => "kubegen",
            Role::KubegenProtobuf => "kubegen-protobuf",
            Role::KubegenMetadata => "kubegen-metadata",
            Role::KubeRs => "kube-rs",
            Role::KubeRsAny => "kube-rs-any",
            Role::KubeRsMetadata => "kube-rs-metadata",
            Role::ClientGo => "client-go",
            Role::ClientGoProtobuf => "client-go-protobuf",
            Role::ClientGoMetadata => "client-go-metadata",
            Role::Floor => "floor",
            Role::Raw => "raw",
        }
    }

    /// Whether this role is client-go's `cgbench`, run by the parent instead of a re-executed
    /// child.
    pub fn is_client_go(self) -> bool {
        matches!(
            self,
            Role::ClientGo | Role::ClientGoProtobuf | Role::ClientGoMetadata
        )
    }

    /// Whether this role's informer reads metadata only.
    pub fn is_metadata(self) -> bool {
        matches!(
            self,
            Role::KubegenMetadata | Role::KubeRsMetadata | Role::ClientGoMetadata
        )
    }
}

impl FromStr for Role {
    type Err = anyhow::Error;

    fn from_str(value: &str) -> Result<Role> {
        Role::ALL
            .into_iter()
            .find(|role| role.as_str() == value)
            .ok_or_else(|| {
                let known: Vec<&str> = Role::ALL.iter().map(|role| role.as_str()).collect();
                anyhow::anyhow!("unknown role {value:?} ({})", known.join(", "))
            })
    }
}

/// Which object set a run lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dataset {
    /// ~1 KiB ConfigMaps.
    ConfigMaps,
    /// Real-looking Deployments with managedFields.
    Deployments,
}

impl Dataset {
    /// The command-line spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Dataset::ConfigMaps => "configmaps",
            Dataset::Deployments => "deployments",
        }
    }

    /// The namespaced collection path of this dataset in `namespace`.
    pub fn collection(self, namespace: &str) -> String {
        match self {
            Dataset::ConfigMaps => format!("/api/v1/namespaces/{namespace}/configmaps"),
            Dataset::Deployments => format!("/apis/apps/v1/namespaces/{namespace}/deployments"),
        }
    }
}

impl FromStr for Dataset {
    type Err = anyhow::Error;

    fn from_str(value: &str) -> Result<Dataset> {
        match value {
            "configmaps" => Ok(Dataset::ConfigMaps),
            "deployments" => Ok(Dataset::Deployments),
            other => bail!("unknown dataset {other:?} (configmaps, deployments)"),
        }
    }
}

/// Everything a child process needs to run one measurement.
#[derive(Clone, Debug)]
pub struct Job {
    /// The client to measure.
    pub role: Role,
    /// Server URL, `http://host:port` (unused with a kubeconfig).
    pub url: String,
    /// The kubeconfig of a real API server (TLS, token): every role reaches the server through it
    /// instead of `url`.
    pub kubeconfig: Option<PathBuf>,
    /// Objects to list.
    pub dataset: Dataset,
    /// Namespace holding them.
    pub namespace: String,
    /// How many objects the server holds; a run that sees another count fails.
    pub expect: usize,
    /// Apply `strip_managed_fields` (kubegen) or the equivalent `modify` (kube-rs, client-go).
    pub strip_managed_fields: bool,
    /// Let the informer stream its initial list where the server serves it (kubegen's and
    /// client-go's default); `false` lists in pages.
    pub streaming_list: bool,
    /// kubegen only: keep the cache as bytes decoded on read (`StoreMode::Bytes`).
    pub byte_store: bool,
    /// kubegen only, run by hand: once synced, also time reads of the cache (`get`, a second
    /// `get`, a `list` by label) and print them on stderr.
    pub read_cost: bool,
}

/// The object types a dataset decodes into, with everything both clients need.
pub trait BenchObject:
    kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
    + Clone
    + DeserializeOwned
    + serde::Serialize
    + Debug
    + Send
    + Sync
    + 'static
{
}

impl<K> BenchObject for K where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + serde::Serialize
        + Debug
        + Send
        + Sync
        + 'static
{
}

impl Job {
    /// The raw client of this job's server.
    ///
    /// # Errors
    /// The kubeconfig cannot be loaded.
    pub async fn raw_client(&self) -> Result<RawClient> {
        match &self.kubeconfig {
            Some(path) => RawClient::from_kubeconfig(path).await,
            None => Ok(RawClient::new(&self.url)),
        }
    }
}

/// Fails when a client synced a different number of objects than the server holds: a benchmark of
/// a client that dropped objects would measure nothing.
pub(crate) fn check_count(role: Role, seen: usize, expect: usize) -> Result<()> {
    if seen != expect {
        bail!(
            "{}: synced {seen} objects, the server holds {expect}",
            role.as_str()
        );
    }
    Ok(())
}
