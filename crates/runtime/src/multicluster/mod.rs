//! One manager, many clusters: controllers that reconcile across a fleet. Providers discover
//! member clusters and the [`Fleet`] engages and disengages them at run time; each engaged
//! cluster gets its own informers and its own instance of every fleet controller, whose
//! reconciler receives a [`ClusterContext`] carrying the cluster's name, client, cache reader and
//! Event recorder. The counterpart of sigs.k8s.io/multicluster-runtime (`pkg/manager`,
//! `pkg/multicluster`, `pkg/reconcile`, `providers/`), the implementation of
//! controller-runtime#2746's design.
//!
//! ```text
//! Provider (kubeconfig files | kubeconfig Secrets in the hub        provider.rs, kubeconfig_files.rs, secrets.rs,
//!           | ClusterProfiles in the hub)                           cluster_profiles.rs
//!   --engage(name, config, fingerprint) / disengage(name)-->
//! Fleet: known clusters ∩ this replica's share of the ring         fleet.rs
//!   --engage--> Cluster: client, informer factory, recorder, state  cluster.rs
//!               one Controller per fleet controller, own queue      engagement.rs
//!               + member→hub watches                                watches.rs
//!               + a probe (GET /version) → state, /readyz, metrics  engagement.rs, metrics.rs
//!   --a key--> FleetReconciler::reconcile(object, ClusterContext)   request.rs
//! ```
//!
//! ```ignore
//! let mut manager = Manager::new(hub_client.clone(), ManagerOptions::default());
//! let fleet = Fleet::new(&manager, FleetOptions::default());
//! fleet.add_provider(KubeconfigSecrets::new(hub_client, SecretOptions::cluster_api("fleet")));
//! fleet.add_controller("policy", |cluster| {
//!     let policies = cluster.hub().informer::<ConfigMap>();      // a hub object ...
//!     cluster.controller("policy", &policies)                    // ... reconciled in each member
//! }, PolicyReconciler);
//! fleet.attach(&mut manager);
//! manager.run(shutdown_signal()).await?;
//! ```
//!
//! # Same as multicluster-runtime
//! - A provider engages clusters by name; a reconcile request names its cluster; the same
//!   reconciler code serves one cluster or many.
//! - Per-cluster caches start at engage and stop at disengage; a Secret's changed content
//!   re-engages the cluster (its kubeconfig provider does the same).
//! - Only the leader runs the fleet (the fleet is one of the manager's runnables).
//!
//! # Different on purpose
//! - **A queue per cluster and controller**, not one shared queue: a member that hangs ties up
//!   only its own workers, never the others' (`engagement.rs`). multicluster-runtime shares the
//!   workers, so `MaxConcurrentReconciles` hung requests of one cluster stall all of them.
//! - **Providers report configurations, the fleet builds clusters**: every cluster is wired the
//!   same way (metrics, recorder, probe), and a provider is a few dozen lines (`provider.rs`).
//! - **The request carries the cluster**, not only its name: no `GetCluster` lookup that can fail
//!   between dequeue and reconcile (`cluster.rs`).
//! - **Health per cluster**: a probe marks a member unreachable; `/readyz` lists every member's
//!   state without failing for one (isolation), and `multicluster_runtime_cluster_ready{cluster}`
//!   exports it (`metrics.rs`). multicluster-runtime has no per-cluster health.
//! - **Sharding across replicas** reuses the manager's `kubegen-sharding` ring, keyed by cluster
//!   name: each replica engages the clusters the ring gives it (`fleet.rs`).
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `fleet`, `secrets`, `kubeconfig_files`, `cluster_profiles`
//! - `watches`
//! - `engagement`
//! - `request`
//! - `cluster`, `metrics`, `provider`

mod cluster;
mod cluster_profiles;
mod engagement;
mod fleet;
mod kubeconfig_files;
mod metrics;
mod provider;
mod request;
mod secrets;
mod watches;

pub use cluster::{Cluster, ClusterState};
pub use cluster_profiles::{
    AccessConfig, AccessProvider, CLUSTER_MANAGER_LABEL, CONTROL_PLANE_HEALTHY, ClusterProfile,
    ClusterProfileOptions, ClusterProfileStatus, ClusterProfiles, CredentialPlugin,
    ProfileCondition,
};
pub use fleet::{Fleet, FleetOptions};
pub use kubeconfig_files::KubeconfigFiles;
pub use provider::{ClusterSink, Provider, fingerprint, kubeconfig_to_config};
pub use request::{ClusterContext, FleetReconciler};
pub use secrets::{
    CLUSTER_NAME_LABEL, KubeconfigSecrets, MULTICLUSTER_RUNTIME_LABEL, SecretOptions,
};
