//! The measured clients. Each runs alone in a child process (see [`crate::runner`]) and reports one
//! [`Cost`].
//!
//! | role               | what it does until "synced"                                                |
//! |--------------------|-----------------------------------------------------------------------------|
//! | `kubegen`          | `SharedIndexInformer` over `kubegen-client` in JSON, until `has_synced()`   |
//! | `kubegen-protobuf` | the same informer reading protobuf (the client's default for built-in kinds) |
//! | `kubegen-metadata` | the same informer over `PartialObjectMeta<K>` (metadata-only list and watch) |
//! | `client-go`        | client-go v1.36's informer (`cgbench`, its own process), JSON               |
//! | `client-go-protobuf` | the same, protobuf                                                        |
//! | `client-go-metadata` | client-go's metadata-only informer (`metadatainformer`)                   |
//! | `kube-rs`          | `kube_runtime::reflector` over `watcher` (page size 500), until `InitDone`  |
//! | `kube-rs-any`      | the same with `any_semantic()` and no page size: one list from the watch cache |
//! | `floor`            | `serde_json` decode of the same list pages, fetched beforehand; decode timed only |
//! | `raw`              | GET every list page and drop the bytes: the transfer cost, no decoding      |
//!
//! Every role reaches the server the same way: the plain URL of a test server, or the kubeconfig
//! of a real one ([`Job::kubeconfig`]).

mod baseline;
pub mod client_go;
mod job;
mod kube_rs;
mod kubegen;

use anyhow::{Result, bail};

use crate::measure::Cost;
use kubegen_client::WireFormat::{Json, Protobuf};

pub use baseline::{floor, raw};
pub use job::{BenchObject, Dataset, Job, Role};

/// Runs `job` in this process and returns its cost.
pub async fn run(job: &Job) -> Result<Cost> {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::ConfigMap;
    match (job.role, job.dataset) {
        (Role::ClientGo | Role::ClientGoProtobuf | Role::ClientGoMetadata, _) => {
            bail!("client-go runs as cgbench, started by the parent")
        }
        (Role::Raw, _) => raw(job).await,
        (Role::Floor, Dataset::ConfigMaps) => floor::<ConfigMap>(job).await,
        (Role::Floor, Dataset::Deployments) => floor::<Deployment>(job).await,
        (Role::KubeRs | Role::KubeRsAny, Dataset::ConfigMaps) => {
            kube_rs::sync::<ConfigMap>(job).await
        }
        (Role::KubeRs | Role::KubeRsAny, Dataset::Deployments) => {
            kube_rs::sync::<Deployment>(job).await
        }
        (Role::KubeRsMetadata, Dataset::ConfigMaps) => {
            kube_rs::sync_metadata::<ConfigMap>(job).await
        }
        (Role::KubeRsMetadata, Dataset::Deployments) => {
            kube_rs::sync_metadata::<Deployment>(job).await
        }
        (Role::Kubegen, Dataset::ConfigMaps) => kubegen::sync::<ConfigMap>(job, Json).await,
        (Role::Kubegen, Dataset::Deployments) => kubegen::sync::<Deployment>(job, Json).await,
        (Role::KubegenProtobuf, Dataset::ConfigMaps) => {
            kubegen::sync::<ConfigMap>(job, Protobuf).await
        }
        (Role::KubegenProtobuf, Dataset::Deployments) => {
            kubegen::sync::<Deployment>(job, Protobuf).await
        }
        (Role::KubegenMetadata, Dataset::ConfigMaps) => {
            kubegen::sync_metadata::<ConfigMap>(job).await
        }
        (Role::KubegenMetadata, Dataset::Deployments) => {
            kubegen::sync_metadata::<Deployment>(job).await
        }
    }
}
