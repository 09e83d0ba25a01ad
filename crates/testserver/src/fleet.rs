//! A fleet of in-process servers in one call: a hub and N members, each a full [`TestServer`]
//! on its own port, plus the hub's kubeconfig Secrets pointing at the members, so a test of a
//! multi-cluster controller (kubegen-runtime's `multicluster`) starts in milliseconds. The real
//! counterpart is a Cluster API management cluster, whose `<cluster>-kubeconfig` Secrets
//! (`sigs.k8s.io/cluster-api/util/secret`: key `value`, label `cluster.x-k8s.io/cluster-name`)
//! these Secrets copy.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::listener::TestServer;

/// Cluster API's label naming a kubeconfig Secret's cluster.
const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";

/// A hub server and member servers. A member can be stopped ([`TestFleet::stop_member`]) to
/// play a cluster that stops answering; its name stays reserved.
pub struct TestFleet {
    hub: TestServer,
    members: Vec<Option<TestServer>>,
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
    pub async fn start(members: usize) -> TestFleet {
        let hub = TestServer::start().await;
        let mut started = Vec::with_capacity(members);
        for _ in 0..members {
            started.push(Some(TestServer::start().await));
        }
        TestFleet {
            hub,
            members: started,
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
        self.members.get(index).and_then(Option::as_ref)
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
    pub fn stop_member(&mut self, index: usize) {
        if let Some(slot) = self.members.get_mut(index) {
            slot.take();
        }
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
}
