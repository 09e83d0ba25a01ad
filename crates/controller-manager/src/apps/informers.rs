//! The three shared informers the deployment and replicaset controllers both read, below both
//! controllers and the entry point that builds it.

use k8s_openapi::api::{
    apps::v1::{Deployment, ReplicaSet},
    core::v1::Pod,
};

/// The informers of Deployments, ReplicaSets and Pods.
pub(crate) struct Informers {
    pub(crate) deployments: kubegen_cache::SharedIndexInformer<Deployment>,
    pub(crate) replica_sets: kubegen_cache::SharedIndexInformer<ReplicaSet>,
    pub(crate) pods: kubegen_cache::SharedIndexInformer<Pod>,
}
