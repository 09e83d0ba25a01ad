//! `fleet-policy` on a fleet of in-process servers (a hub and three members), and on real
//! members: a WhiteList written in the hub is enforced in every member (an offending Deployment
//! there is deleted), a changed list is enforced as changed, a deleted one no longer; a member
//! whose Secret is deleted is left alone; a member whose Secret's credentials change is
//! re-engaged and enforced again; a member whose Secret returns catches up; a member whose
//! server dies does not hold up the others and is enforced again once it restarts.

use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kubegen_api::police::v1beta1::{ImageRule, WhiteList, WhiteListSpec};
use kubegen_client::{
    Client, CreateOptions, DeleteOptions, GetOptions, ResourceClient, UpdateOptions,
};
use kubegen_examples::fleet::{FleetPolicy, FleetPolicyOptions};
use kubegen_testserver::{TestFleet, kubeconfig_secret};

/// The WhiteList CRDs (and the examples' others) as the binaries install them.
const CRDS: &str = include_str!("../../../deploy/crd.yaml");

/// A WhiteList `allowed` in `namespace` allowing exactly `images` (`name:tag`).
fn whitelist(namespace: &str, images: &[(&str, &str)]) -> WhiteList {
    WhiteList {
        metadata: ObjectMeta {
            name: Some("allowed".to_owned()),
            namespace: Some(namespace.to_owned()),
            ..ObjectMeta::default()
        },
        spec: WhiteListSpec {
            images: images
                .iter()
                .map(|(name, tag)| ImageRule {
                    name: (*name).to_owned(),
                    tags: vec![(*tag).to_owned()],
                })
                .collect(),
            allow_none: None,
        },
        status: None,
    }
}

/// A Deployment `name` in `namespace` running `image`.
fn deployment(namespace: &str, name: &str, image: &str) -> Deployment {
    let labels = std::collections::BTreeMap::from([("app".to_owned(), name.to_owned())]);
    Deployment {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(namespace.to_owned()),
            ..ObjectMeta::default()
        },
        spec: Some(DeploymentSpec {
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "main".to_owned(),
                        image: Some(image.to_owned()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        }),
        ..Deployment::default()
    }
}

/// Creates Deployment `name` running `image` in `member`.
async fn run(member: &Client, namespace: &str, name: &str, image: &str) {
    let deployments = ResourceClient::<Deployment>::namespaced(member.clone(), namespace);
    deployments
        .create(
            &deployment(namespace, name, image),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
}

/// Whether `member` holds Deployment `name` (not being deleted).
async fn runs(member: &Client, namespace: &str, name: &str) -> bool {
    let deployments = ResourceClient::<Deployment>::namespaced(member.clone(), namespace);
    let found = deployments.get(name, &GetOptions::default()).await;
    found.is_ok_and(|d| d.metadata.deletion_timestamp.is_none())
}

/// Waits up to 30 s until Deployment `name` is gone from every one of `members`.
async fn deleted_everywhere(members: &[&Client], namespace: &str, name: &str) {
    for _ in 0..300 {
        let mut any = false;
        for member in members {
            any |= runs(member, namespace, name).await;
        }
        if !any {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("Deployment {namespace}/{name} was not deleted in every member");
}

/// Replaces the allowed images of the hub's WhiteList `allowed`.
async fn allow(hub: &Client, namespace: &str, images: &[(&str, &str)]) {
    let lists = ResourceClient::<WhiteList>::namespaced(hub.clone(), namespace);
    let mut current = lists.get("allowed", &GetOptions::default()).await.unwrap();
    current.spec = whitelist(namespace, images).spec;
    lists
        .update(&current, &UpdateOptions::default())
        .await
        .unwrap();
}

async fn clusters_become(controller: &FleetPolicy, wanted: &[&str]) {
    for _ in 0..300 {
        if controller.clusters() == wanted {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(controller.clusters(), wanted);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hub_whitelist_is_enforced_in_every_member_as_the_fleet_changes() {
    let mut servers = TestFleet::start(3).await;
    let hub = servers.hub().client();
    kubegen_runtime::crds::install(&hub, CRDS).await.unwrap();
    servers.install_kubeconfig_secrets("default").await.unwrap();
    let options = FleetPolicyOptions {
        probe_period: Duration::from_millis(100),
        ..FleetPolicyOptions::default()
    };
    let controller = FleetPolicy::start(hub.clone(), &options);
    let member = |servers: &TestFleet, index: usize| servers.member(index).unwrap().client();
    let members: Vec<Client> = (0..3).map(|i| member(&servers, i)).collect();
    let all: Vec<&Client> = members.iter().collect();
    clusters_become(&controller, &["member-0", "member-1", "member-2"]).await;

    // Created in the hub: enforced in every member.
    let lists = ResourceClient::<WhiteList>::namespaced(hub.clone(), "default");
    let created = whitelist("default", &[("nginx", "1.27")]);
    lists
        .create(&created, &CreateOptions::default())
        .await
        .unwrap();
    for client in &members {
        run(client, "default", "web", "nginx:1.27").await;
        run(client, "default", "shell", "busybox:1.36").await;
    }
    deleted_everywhere(&all, "default", "shell").await;
    for client in &members {
        assert!(
            runs(client, "default", "web").await,
            "an allowed image stays"
        );
    }

    // Changed in the hub: nginx is no longer allowed, so every member's web goes.
    allow(&hub, "default", &[("busybox", "1.36")]).await;
    deleted_everywhere(&all, "default", "web").await;

    // Disengaged: member-1's Secret goes; the hub's list no longer reaches it.
    let secrets = ResourceClient::<Secret>::namespaced(hub.clone(), "default");
    secrets
        .delete("member-1-kubeconfig", &DeleteOptions::default())
        .await
        .unwrap();
    clusters_become(&controller, &["member-0", "member-2"]).await;
    let before = controller.deletions("member-1");
    for client in &members {
        run(client, "default", "left-alone", "nginx:1.27").await;
    }
    deleted_everywhere(&[all[0], all[2]], "default", "left-alone").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(runs(all[1], "default", "left-alone").await);
    assert_eq!(controller.deletions("member-1"), before);

    // Rotated credentials: member-2's Secret changes; it is re-engaged and enforced again.
    let mut secret = secrets
        .get("member-2-kubeconfig", &GetOptions::default())
        .await
        .unwrap();
    let rotated = format!(
        "{}# rotated\n",
        servers.member(2).unwrap().kubeconfig_yaml()
    );
    secret.data = kubeconfig_secret("member-2", "default", &rotated).data;
    secrets
        .update(&secret, &UpdateOptions::default())
        .await
        .unwrap();
    run(all[2], "default", "after-rotation", "nginx:1.27").await;
    deleted_everywhere(&[all[2]], "default", "after-rotation").await;

    // member-1 comes back: its offender is caught up on.
    let back = servers.kubeconfig_secret(1, "default").unwrap();
    secrets
        .create(&back, &CreateOptions::default())
        .await
        .unwrap();
    deleted_everywhere(&[all[1]], "default", "left-alone").await;

    // member-2's server dies: the others keep being enforced.
    servers.stop_member(2);
    run(all[0], "default", "while-2-is-down", "nginx:1.27").await;
    deleted_everywhere(&[all[0]], "default", "while-2-is-down").await;
    // It restarts on the same address with its data: enforced again, no manual step.
    servers.restart_member(2).await.unwrap();
    let restarted = member(&servers, 2);
    run(&restarted, "default", "after-restart", "nginx:1.27").await;
    deleted_everywhere(&[&restarted], "default", "after-restart").await;

    // Deleted in the hub: nothing is enforced any more.
    lists
        .delete("allowed", &DeleteOptions::default())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    run(all[0], "default", "free", "nginx:1.27").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        runs(all[0], "default", "free").await,
        "no list, no enforcement"
    );
    controller.shutdown().await.unwrap();
}

/// The member kubeconfigs of the real-cluster twins: `KUBEGEN_FLEET_MEMBERS`, comma-separated
/// (e.g. `/opt/k8s136/admin.kubeconfig,/opt/realk8s/admin.kubeconfig`).
const MEMBERS_VAR: &str = "KUBEGEN_FLEET_MEMBERS";
/// The script that stops and starts the second real member (`<script> stop|start`), for the
/// restart twin only: `KUBEGEN_FLEET_RESTART`.
const RESTART_VAR: &str = "KUBEGEN_FLEET_RESTART";

/// A client for `kubeconfig`.
fn client_of(kubeconfig: &str) -> Client {
    let path = std::path::Path::new(kubeconfig);
    let yaml = std::fs::read_to_string(path).unwrap();
    let config =
        kubegen_runtime::multicluster::kubeconfig_to_config("member", &yaml, path).unwrap();
    Client::new(config).unwrap()
}

/// A hub on the test server with the WhiteList CRD, two real members (`real-a`, `real-b`) from
/// `KUBEGEN_FLEET_MEMBERS`, a namespace `fleet2-<suffix>` in all three, the members' Secrets in
/// the hub, and `fleet-policy` running over it.
struct RealFleet {
    _hub_server: TestFleet,
    hub: Client,
    paths: Vec<String>,
    members: Vec<Client>,
    namespace: String,
    controller: FleetPolicy,
}

impl RealFleet {
    /// `None` (the test is skipped) without `KUBEGEN_FLEET_MEMBERS`.
    async fn start() -> Option<RealFleet> {
        use k8s_openapi::api::core::v1::Namespace;
        let Ok(paths) = std::env::var(MEMBERS_VAR) else {
            println!("skipped: {MEMBERS_VAR} is not set");
            return None;
        };
        let paths: Vec<String> = paths.split(',').map(str::to_owned).collect();
        assert_eq!(paths.len(), 2, "{MEMBERS_VAR} names two kubeconfigs");
        let namespace = format!("fleet2-{}", kubegen_examples::target::unique_suffix());
        let hub_server = TestFleet::start(0).await;
        let hub = hub_server.hub().client();
        kubegen_runtime::crds::install(&hub, CRDS).await.unwrap();
        let members: Vec<Client> = paths.iter().map(|p| client_of(p)).collect();
        let ns = Namespace {
            metadata: ObjectMeta {
                name: Some(namespace.clone()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        for client in members.iter().chain([&hub]) {
            let namespaces = ResourceClient::<Namespace>::cluster(client.clone());
            namespaces
                .create(&ns, &CreateOptions::default())
                .await
                .unwrap();
        }
        let fleet = RealFleet {
            _hub_server: hub_server,
            controller: FleetPolicy::start(
                hub.clone(),
                &FleetPolicyOptions {
                    secrets_namespace: namespace.clone(),
                    namespace: Some(namespace.clone()),
                    probe_period: Duration::from_millis(500),
                },
            ),
            hub,
            paths,
            members,
            namespace,
        };
        for index in 0..2 {
            fleet.add_secret(index).await;
        }
        clusters_become(&fleet.controller, &["real-a", "real-b"]).await;
        Some(fleet)
    }

    fn name(index: usize) -> &'static str {
        ["real-a", "real-b"][index]
    }

    fn secrets(&self) -> ResourceClient<Secret> {
        ResourceClient::<Secret>::namespaced(self.hub.clone(), &self.namespace)
    }

    /// Creates member `index`'s Secret.
    async fn add_secret(&self, index: usize) {
        let yaml = std::fs::read_to_string(&self.paths[index]).unwrap();
        let secret = kubeconfig_secret(Self::name(index), &self.namespace, &yaml);
        self.secrets()
            .create(&secret, &CreateOptions::default())
            .await
            .unwrap();
    }

    fn member(&self, index: usize) -> &Client {
        &self.members[index]
    }

    async fn create_whitelist(&self, images: &[(&str, &str)]) {
        let lists = ResourceClient::<WhiteList>::namespaced(self.hub.clone(), &self.namespace);
        lists
            .create(
                &whitelist(&self.namespace, images),
                &CreateOptions::default(),
            )
            .await
            .unwrap();
    }

    /// Stops the controller and removes the namespace's Deployments and the namespace from
    /// every member (the 1.15 server has no namespace controller: emptied first, its namespace
    /// is left Terminating but holding nothing).
    async fn clean_up(self) {
        self.controller.shutdown().await.unwrap();
        for client in &self.members {
            let deployments =
                ResourceClient::<Deployment>::namespaced(client.clone(), &self.namespace);
            let _ = deployments
                .delete_collection(&DeleteOptions::default(), &Default::default())
                .await;
            let namespaces =
                ResourceClient::<k8s_openapi::api::core::v1::Namespace>::cluster(client.clone());
            let _ = namespaces
                .delete(&self.namespace, &DeleteOptions::default())
                .await;
        }
    }
}

/// A hub on the test server whose members are real API servers (v1.36 with its
/// controller-manager, and 1.15): a hub WhiteList enforced in both, changed, one member
/// disengaged (left alone), the other's credentials rotated (re-engaged, enforced), the first
/// back (caught up), the list deleted (no more enforcement).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs real clusters: set KUBEGEN_FLEET_MEMBERS to two comma-separated kubeconfigs"]
async fn real_members_enforce_a_hub_whitelist_on_cluster() {
    let Some(fleet) = RealFleet::start().await else {
        return;
    };
    let ns = fleet.namespace.clone();
    let (a, b) = (fleet.member(0), fleet.member(1));
    fleet.create_whitelist(&[("nginx", "1.27")]).await;
    for client in [a, b] {
        run(client, &ns, "web", "nginx:1.27").await;
        run(client, &ns, "shell", "busybox:1.36").await;
    }
    deleted_everywhere(&[a, b], &ns, "shell").await;
    assert!(runs(a, &ns, "web").await && runs(b, &ns, "web").await);
    allow(&fleet.hub, &ns, &[("busybox", "1.36")]).await;
    deleted_everywhere(&[a, b], &ns, "web").await;

    // Disengage real-b: its offender is left alone.
    fleet
        .secrets()
        .delete("real-b-kubeconfig", &DeleteOptions::default())
        .await
        .unwrap();
    clusters_become(&fleet.controller, &["real-a"]).await;
    for client in [a, b] {
        run(client, &ns, "left-alone", "nginx:1.27").await;
    }
    deleted_everywhere(&[a], &ns, "left-alone").await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(runs(b, &ns, "left-alone").await);

    // Rotate real-a's Secret (same credentials, new content): re-engaged, enforced.
    let mut secret = fleet
        .secrets()
        .get("real-a-kubeconfig", &GetOptions::default())
        .await
        .unwrap();
    let rotated = std::fs::read_to_string(&fleet.paths[0]).unwrap() + "\n# rotated\n";
    secret.data = kubeconfig_secret("real-a", &ns, &rotated).data;
    fleet
        .secrets()
        .update(&secret, &UpdateOptions::default())
        .await
        .unwrap();
    run(a, &ns, "after-rotation", "nginx:1.27").await;
    deleted_everywhere(&[a], &ns, "after-rotation").await;

    // real-b comes back and catches up.
    fleet.add_secret(1).await;
    deleted_everywhere(&[b], &ns, "left-alone").await;
    assert!(fleet.controller.deletions("real-b") >= 3);

    // The list goes: nothing is enforced any more.
    let lists = ResourceClient::<WhiteList>::namespaced(fleet.hub.clone(), &ns);
    lists
        .delete("allowed", &DeleteOptions::default())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    run(a, &ns, "free", "nginx:1.27").await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(runs(a, &ns, "free").await);
    fleet.clean_up().await;
}

/// Waits up to 60 s until `check` holds for the state of `cluster`.
async fn state_becomes(
    controller: &FleetPolicy,
    cluster: &str,
    what: &str,
    check: impl Fn(&kubegen_runtime::multicluster::ClusterState) -> bool,
) {
    for _ in 0..600 {
        if controller.state(cluster).as_ref().is_some_and(&check) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "{cluster} did not become {what}: {:?}",
        controller.state(cluster)
    );
}

/// The second real member's API server stopped and started again (by `KUBEGEN_FLEET_RESTART`,
/// a `kube-apiserver-*.sh` of `/work/shared/realservers`; `hack/fleet-restart-check.sh` runs
/// this alone, as it takes the server away from everyone else): while it is down it shows
/// unreachable and the first member is still enforced; once it is back it turns ready and is
/// enforced again, with no manual step.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "stops a real API server: run it alone with hack/fleet-restart-check.sh"]
async fn real_member_killed_and_restarted_on_cluster() {
    let Ok(script) = std::env::var(RESTART_VAR) else {
        println!("skipped: {RESTART_VAR} is not set");
        return;
    };
    let Some(fleet) = RealFleet::start().await else {
        return;
    };
    let ns = fleet.namespace.clone();
    let (a, b) = (fleet.member(0), fleet.member(1));
    fleet.create_whitelist(&[("nginx", "1.27")]).await;
    state_becomes(&fleet.controller, "real-b", "ready", |s| {
        *s == kubegen_runtime::multicluster::ClusterState::Ready
    })
    .await;
    run(b, &ns, "before-the-stop", "busybox:1.36").await;
    deleted_everywhere(&[b], &ns, "before-the-stop").await;

    // In a session of its own (as the realservers README starts them): the restarted server
    // outlives this test's process group.
    let control = |verb: &str| {
        let status = std::process::Command::new("setsid")
            .args(["-w", script.as_str(), verb])
            .status()
            .unwrap_or_else(|e| panic!("running {script} {verb}: {e}"));
        assert!(status.success(), "{script} {verb}: {status}");
    };
    control("stop");
    state_becomes(&fleet.controller, "real-b", "unreachable", |s| {
        matches!(
            s,
            kubegen_runtime::multicluster::ClusterState::Unreachable { .. }
        )
    })
    .await;
    run(a, &ns, "while-b-is-down", "busybox:1.36").await;
    deleted_everywhere(&[a], &ns, "while-b-is-down").await;

    control("start");
    state_becomes(&fleet.controller, "real-b", "ready again", |s| {
        *s == kubegen_runtime::multicluster::ClusterState::Ready
    })
    .await;
    run(b, &ns, "after-the-restart", "busybox:1.36").await;
    deleted_everywhere(&[b], &ns, "after-the-restart").await;
    assert_eq!(fleet.controller.clusters(), ["real-a", "real-b"]);
    fleet.clean_up().await;
}
