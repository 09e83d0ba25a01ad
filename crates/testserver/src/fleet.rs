//! A fleet of in-process servers in one call: a hub and N members, each a full [`TestServer`]
//! on its own port, plus the hub's kubeconfig Secrets pointing at the members, so a test of a
//! multi-cluster controller (kubegen-runtime's `multicluster`) starts in milliseconds. The real
//! counterpart is a Cluster API management cluster, whose `<cluster>-kubeconfig` Secrets
//! (`sigs.k8s.io/cluster-api/util/secret`: key `value`, label `cluster.x-k8s.io/cluster-name`)
//! these Secrets copy.
//!
//! A member can be stopped and started again on the same address with the objects it held, as a
//! real API server restarts over its etcd: [`TestFleet::stop_member`] keeps a snapshot of its
//! objects (the data directory a [`ServerOptions::data_dir`] server restores from) and
//! [`TestFleet::restart_member`] brings it back, so a fleet's recovery from a member that died is
//! testable without a manual step.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::error::Error;
use crate::listener::TestServer;
use crate::options::ServerOptions;

/// Cluster API's label naming a kubeconfig Secret's cluster.
const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";

/// A hub server and member servers. A member can be stopped ([`TestFleet::stop_member`]) to
/// play a cluster that stops answering, and restarted ([`TestFleet::restart_member`]); its name
/// and address stay reserved.
pub struct TestFleet {
    hub: TestServer,
    members: Vec<Member>,
    /// How members are started (and restarted).
    options: ServerOptions,
    /// The members' snapshots while they are stopped, one folder each.
    data: tempfile::TempDir,
}

/// One member: its server while it runs, and the port it keeps across restarts.
struct Member {
    server: Option<TestServer>,
    port: u16,
}

impl std::fmt::Debug for TestFleet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestFleet")
            .field("hub", &self.hub.url())
            .field("members", &self.members.len())
            .finish()
    }
}

impl TestFleet {
    /// Starts a hub and `members` member servers (plain HTTP, no authentication; each starts in
    /// a few milliseconds).
    ///
    /// # Panics
    /// If no temporary folder can be made for the members' snapshots (a broken test
    /// environment), or a server cannot start (see [`TestServer::start`]).
    pub async fn start(members: usize) -> TestFleet {
        TestFleet::start_with(members, ServerOptions::default()).await
    }

    /// Like [`TestFleet::start`], each member started with `options` (a required bearer token,
    /// TLS, ...; the port and data directory are the fleet's). The hub is a plain server.
    ///
    /// # Panics
    /// As [`TestFleet::start`].
    pub async fn start_with(members: usize, options: ServerOptions) -> TestFleet {
        let hub = TestServer::start().await;
        let mut started = Vec::with_capacity(members);
        for _ in 0..members {
            let mut member_options = options.clone();
            member_options.port = 0;
            member_options.data_dir = None;
            let server = TestServer::start_with(member_options).await;
            let port = member_port(&server);
            started.push(Member {
                server: Some(server),
                port,
            });
        }
        // A test without a writable temporary folder cannot run at all.
        #[allow(clippy::expect_used)]
        let data = tempfile::tempdir().expect("a temporary folder for the members' snapshots");
        TestFleet {
            hub,
            members: started,
            options,
            data,
        }
    }

    /// The name of member `index`: `member-<index>`.
    pub fn member_name(index: usize) -> String {
        format!("member-{index}")
    }

    /// The hub.
    pub fn hub(&self) -> &TestServer {
        &self.hub
    }

    /// Member `index`, unless it was stopped (or there is no such member).
    pub fn member(&self, index: usize) -> Option<&TestServer> {
        self.members.get(index).and_then(|m| m.server.as_ref())
    }

    /// How many members the fleet started with.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether the fleet has no members.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Stops member `index` (its listener closes, its watches end): the cluster stops answering.
    /// Its objects are kept for [`TestFleet::restart_member`].
    pub fn stop_member(&mut self, index: usize) {
        let dir = self.data.path().join(Self::member_name(index));
        if let Some(server) = self.members.get_mut(index).and_then(|m| m.server.take())
            && let Err(error) = server.api().save(&dir)
        {
            tracing::warn!(member = index, %error, "keeping the stopped member's objects failed");
        }
    }

    /// Starts the stopped member `index` again on its old address, with the objects it held
    /// when it stopped (their resourceVersions continue, as after a real server's restart over
    /// the same etcd) and the options the fleet started with. A running member is left alone.
    ///
    /// # Errors
    /// [`Error::BindFailed`] when its port stays taken for 5 s (the old listener closes
    /// asynchronously), [`Error::DataDirFailed`] when the snapshot cannot be read.
    pub async fn restart_member(&mut self, index: usize) -> Result<(), Error> {
        let dir = self.data.path().join(Self::member_name(index));
        let Some(member) = self.members.get_mut(index) else {
            return Ok(());
        };
        if member.server.is_some() {
            return Ok(());
        }
        let mut options = self.options.clone();
        options.port = member.port;
        options.data_dir = dir.exists().then_some(dir);
        let mut attempts = 0;
        let server = loop {
            match TestServer::try_start(options.clone()).await {
                Err(Error::BindFailed { .. }) if attempts < 250 => {
                    attempts += 1;
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
                other => break other?,
            }
        };
        member.server = Some(server);
        Ok(())
    }

    /// The Cluster API kubeconfig Secret of member `index` in `namespace`:
    /// `member-<index>-kubeconfig`, the kubeconfig under `value`, labelled
    /// `cluster.x-k8s.io/cluster-name=member-<index>`. `None` for a stopped member.
    pub fn kubeconfig_secret(&self, index: usize, namespace: &str) -> Option<Secret> {
        let member = self.member(index)?;
        Some(kubeconfig_secret(
            &Self::member_name(index),
            namespace,
            &member.kubeconfig_yaml(),
        ))
    }

    /// Creates every running member's kubeconfig Secret in the hub's `namespace` (which must
    /// exist; `default` always does).
    ///
    /// # Errors
    /// The first create the hub refused.
    pub async fn install_kubeconfig_secrets(&self, namespace: &str) -> kubegen_client::Result<()> {
        let secrets =
            kubegen_client::ResourceClient::<Secret>::namespaced(self.hub.client(), namespace);
        for index in 0..self.members.len() {
            if let Some(secret) = self.kubeconfig_secret(index, namespace) {
                secrets
                    .create(&secret, &kubegen_client::CreateOptions::default())
                    .await?;
            }
        }
        Ok(())
    }
}

/// A Cluster API kubeconfig Secret for `cluster` holding `kubeconfig` (see the module docs).
pub fn kubeconfig_secret(cluster: &str, namespace: &str, kubeconfig: &str) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(format!("{cluster}-kubeconfig")),
            namespace: Some(namespace.to_owned()),
            labels: Some(BTreeMap::from([(
                CLUSTER_NAME_LABEL.to_owned(),
                cluster.to_owned(),
            )])),
            ..ObjectMeta::default()
        },
        type_: Some("cluster.x-k8s.io/secret".to_owned()),
        data: Some(BTreeMap::from([(
            "value".to_owned(),
            ByteString(kubeconfig.as_bytes().to_vec()),
        )])),
        ..Secret::default()
    }
}

/// The port `server` listens on (its URL's).
fn member_port(server: &TestServer) -> u16 {
    let url: Option<http::Uri> = server.url().parse().ok();
    url.and_then(|url| url.port_u16()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubeconfig_secret_follows_cluster_apis_convention() {
        let secret = kubeconfig_secret("prod", "fleet", "apiVersion: v1\n");
        assert_eq!(secret.metadata.name.as_deref(), Some("prod-kubeconfig"));
        assert_eq!(secret.metadata.namespace.as_deref(), Some("fleet"));
        let labels = secret.metadata.labels.unwrap_or_default();
        assert_eq!(
            labels.get(CLUSTER_NAME_LABEL).map(String::as_str),
            Some("prod")
        );
        assert_eq!(secret.type_.as_deref(), Some("cluster.x-k8s.io/secret"));
        let data = secret.data.unwrap_or_default();
        assert_eq!(
            data.get("value").map(|v| v.0.as_slice()),
            Some(b"apiVersion: v1\n".as_slice())
        );
    }

    #[tokio::test]
    async fn a_fleet_is_a_hub_and_distinct_members_and_a_stopped_member_is_gone() {
        let mut fleet = TestFleet::start(3).await;
        let mut urls: Vec<String> = (0..3)
            .map(|i| fleet.member(i).map(TestServer::url).unwrap_or_default())
            .collect();
        urls.push(fleet.hub().url());
        urls.sort();
        urls.dedup();
        assert_eq!(urls.len(), 4, "four servers on four ports");
        fleet.stop_member(1);
        assert!(fleet.member(1).is_none());
        assert!(fleet.kubeconfig_secret(1, "default").is_none());
        assert_eq!(fleet.len(), 3);
        fleet
            .install_kubeconfig_secrets("default")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let secrets =
            kubegen_client::ResourceClient::<Secret>::namespaced(fleet.hub().client(), "default");
        let list = secrets
            .list(&kubegen_client::ListOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let mut names: Vec<String> = list
            .items
            .into_iter()
            .filter_map(|s| s.metadata.name)
            .collect();
        names.sort();
        assert_eq!(names, ["member-0-kubeconfig", "member-2-kubeconfig"]);
    }

    #[tokio::test]
    async fn a_restarted_member_answers_on_its_old_address_with_its_objects() {
        use k8s_openapi::api::core::v1::ConfigMap;
        let options = ServerOptions {
            bearer_token: Some("member-token".to_owned()),
            controller_manager: false,
            ..ServerOptions::default()
        };
        let mut fleet = TestFleet::start_with(2, options).await;
        let before = fleet.member(0).map(TestServer::kubeconfig_yaml);
        let config_maps = |fleet: &TestFleet| {
            let member = fleet.member(0).map(TestServer::client);
            member.map(|client| {
                kubegen_client::ResourceClient::<ConfigMap>::namespaced(client, "default")
            })
        };
        let kept = ConfigMap {
            metadata: ObjectMeta {
                name: Some("kept".to_owned()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        let created = config_maps(&fleet)
            .unwrap_or_else(|| panic!("member 0 runs"))
            .create(&kept, &kubegen_client::CreateOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        fleet.stop_member(0);
        assert!(fleet.member(0).is_none());
        fleet
            .restart_member(0)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            fleet.member(0).map(TestServer::kubeconfig_yaml),
            before,
            "same address, same token"
        );
        let read = config_maps(&fleet)
            .unwrap_or_else(|| panic!("member 0 runs again"))
            .get("kept", &kubegen_client::GetOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read.metadata.uid, created.metadata.uid);
        assert_eq!(
            read.metadata.resource_version,
            created.metadata.resource_version
        );
        fleet
            .restart_member(1)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(fleet.member(1).is_some(), "a running member is left alone");
    }
}
