//! Server configuration.

use std::sync::Arc;
use std::time::Duration;

use crate::audit::AuditPolicy;
use crate::authz::{AllowAll, Authorizer, UserInfo};

/// How a [`crate::TestServer`] or [`crate::ApiServer`] behaves.
///
/// The struct is `#[non_exhaustive]` so options can be added; start from `Default` and assign:
/// ```
/// let mut options = kubegen_testserver::ServerOptions::default();
/// options.tls = true;
/// options.bearer_token = Some("token".into());
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ServerOptions {
    /// Serve HTTPS with a freshly generated CA (see [`crate::TestServer::ca_pem`]).
    pub tls: bool,
    /// Require `Authorization: Bearer <token>`; other requests get 401. This token authenticates
    /// as [`UserInfo::admin`] (`system:masters`), and the kubeconfig the server hands out uses it.
    pub bearer_token: Option<String>,
    /// More bearer tokens and the users they authenticate as (apiserver `--token-auth-file`).
    /// Authentication is on when this list is non-empty or `bearer_token` is set: a request with
    /// no or an unknown token then gets 401. Tokens issued through a ServiceAccount's `token`
    /// subresource are accepted as well. When authentication is off every request runs as
    /// [`UserInfo::admin`].
    pub tokens: Vec<(String, UserInfo)>,
    /// Authorize every request with RBAC over the stored Roles, ClusterRoles and their bindings
    /// (`--authorization-mode=RBAC`, with `system:masters` allowed everything), and create the
    /// default cluster roles and bindings a real server bootstraps. When false, `authorizer`
    /// decides (allow-all by default).
    pub rbac: bool,
    /// TCP port to bind on 127.0.0.1; 0 picks an ephemeral port.
    pub port: u16,
    /// How many change events are kept for watches and paginated lists. Requests at an older
    /// resourceVersion get 410 Expired, like the real server after etcd compaction.
    pub history_size: usize,
    /// Interval of periodic BOOKMARK events on watches that asked for them (the real server sends
    /// one about every minute).
    pub bookmark_interval: Duration,
    /// How long a read at a future resourceVersion waits before failing with 504 "Too large
    /// resource version" (the real server waits 3 s).
    pub too_large_rv_wait: Duration,
    /// Whether `sendInitialEvents=true` watches are supported (the WatchList feature). When false
    /// the server refuses them with 422, as a kube-apiserver with the WatchList gate off does,
    /// so clients' fallback to list+watch can be tested.
    pub streaming_list: bool,
    /// Serve the `shardSelector` list/watch option (KEP-5866, the `ShardedListAndWatch` feature
    /// gate): lists, watches and delete-collections keep only objects whose FNV-1a 64 hash of
    /// `metadata.uid` or `metadata.namespace` lies in the requested ranges, and a filtered list
    /// says so in `metadata.shardInfo`. Off by default, as the gate is alpha and off on a
    /// default v1.36 server (which then ignores the parameter, so clients' fallback runs by
    /// default); switch it on to test server-side sharding.
    pub sharded_list_and_watch: bool,
    /// Decides every request and answers access reviews (`kubectl auth can-i`) unless `rbac` is
    /// set. [`AllowAll`] by default, like a server with `--authorization-mode=AlwaysAllow`.
    pub authorizer: Arc<dyn Authorizer>,
    /// Run kube-controller-manager's controllers beside the server (`kubegen-controller-manager`
    /// with its default set: namespace lifecycle, garbage collector, ServiceAccounts and their
    /// tokens, Deployments, ReplicaSets, StatefulSets, Jobs and CronJobs), as an administrator, started by
    /// [`crate::TestServer::start_with`] and stopped when the server drops. On by default, as on
    /// a real cluster; switch it off to see what the apiserver alone answers: deleted namespaces
    /// stay `Terminating`, `Foreground` / `Orphan` deletes keep their finalizer, nothing is
    /// garbage-collected. [`crate::ApiServer`] without a socket never runs it.
    pub controller_manager: bool,
    /// Run simulated Nodes, a scheduler and a kubelet beside the server (`kubegen-nodesim`, as
    /// kwok simulates a cluster's nodes), so Pods are scheduled, run and become ready, and a
    /// Deployment becomes Available. Started by [`crate::TestServer::start_with`] as an
    /// administrator and stopped with the server; [`crate::ApiServer`] without a socket never
    /// runs it. `None` by default for a library user's [`crate::TestServer`], which then answers
    /// as a cluster without nodes (Pods stay Pending), the state the controller-manager's tests
    /// compare with a real cluster; the `kubegen-testserver` binary (`--simulated-nodes`, 3 by
    /// default) and `kubegen-embedded` turn it on.
    pub simulated_nodes: Option<kubegen_nodesim::NodeSimOptions>,
    /// A directory where [`crate::TestServer`] keeps its objects (and the key ServiceAccount
    /// tokens are signed with) so they survive a restart, like etcd's data directory: restored at
    /// start when it holds a snapshot, saved shortly after every change and when the server stops.
    /// `None` (the default) keeps everything in memory. [`crate::ApiServer`] without a socket ignores it.
    pub data_dir: Option<std::path::PathBuf>,
    /// Write an audit log as kube-apiserver does with `--audit-policy-file`: each request the
    /// policy selects writes `audit.k8s.io/v1` `Event`s (stages `RequestReceived`,
    /// `ResponseStarted` for streams, `ResponseComplete`) to `audit_log_path` and to memory,
    /// where a test reads them with [`crate::ApiServer::audit_events`]. `None` (the default):
    /// no audit log. Every response carries an `Audit-Id` header either way.
    pub audit_policy: Option<AuditPolicy>,
    /// The file the audit log is appended to (`--audit-log-path`), `-` for stdout; `None` keeps
    /// the events in memory only. Used only with `audit_policy`.
    pub audit_log_path: Option<std::path::PathBuf>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            tls: false,
            bearer_token: None,
            tokens: Vec::new(),
            rbac: false,
            port: 0,
            history_size: 10_000,
            bookmark_interval: Duration::from_secs(60),
            too_large_rv_wait: Duration::from_secs(1),
            streaming_list: true,
            sharded_list_and_watch: false,
            authorizer: Arc::new(AllowAll),
            controller_manager: true,
            simulated_nodes: None,
            data_dir: None,
            audit_policy: None,
            audit_log_path: None,
        }
    }
}
