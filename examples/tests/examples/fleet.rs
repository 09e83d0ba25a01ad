//! `fleet-policy` on a fleet of in-process servers (a hub and three members): a policy written
//! in the hub reaches every member; a member whose Secret is deleted gets no more updates; a
//! member whose Secret's credentials change is re-engaged and converges again; a member whose
//! server stops does not hold up the others.

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kubegen_client::{CreateOptions, DeleteOptions, GetOptions, ResourceClient, UpdateOptions};
use kubegen_examples::fleet::{FleetPolicy, FleetPolicyOptions, policy};
use kubegen_testserver::{TestFleet, kubeconfig_secret};

/// The `mode` value of member `index`'s copy of `name`, if it has one.
async fn copy_mode(servers: &TestFleet, index: usize, name: &str) -> Option<String> {
    let member = servers.member(index)?;
    let copies = ResourceClient::<ConfigMap>::namespaced(member.client(), "default");
    let copy = copies.get(name, &GetOptions::default()).await.ok()?;
    copy.data?.get("mode").cloned()
}

/// Waits up to 10 s until every member in `members` holds `mode`.
async fn converged(servers: &TestFleet, members: &[usize], mode: &str) {
    for _ in 0..500 {
        let mut all = true;
        for &index in members {
            all &= copy_mode(servers, index, "images").await.as_deref() == Some(mode);
        }
        if all {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("members {members:?} did not converge on mode={mode}");
}

async fn set_mode(servers: &TestFleet, mode: &str) {
    let policies = ResourceClient::<ConfigMap>::namespaced(servers.hub().client(), "default");
    let mut current = policies
        .get("images", &GetOptions::default())
        .await
        .unwrap();
    current.data = policy("default", "images", &[("mode", mode)]).data;
    policies
        .update(&current, &UpdateOptions::default())
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hub_policy_is_enforced_in_every_member_as_the_fleet_changes() {
    let mut servers = TestFleet::start(3).await;
    servers.install_kubeconfig_secrets("default").await.unwrap();
    let options = FleetPolicyOptions {
        probe_period: Duration::from_millis(100),
        ..FleetPolicyOptions::default()
    };
    let controller = FleetPolicy::start(servers.hub().client(), &options);
    let policies = ResourceClient::<ConfigMap>::namespaced(servers.hub().client(), "default");
    let images = policy("default", "images", &[("mode", "signed-only")]);
    policies
        .create(&images, &CreateOptions::default())
        .await
        .unwrap();
    converged(&servers, &[0, 1, 2], "signed-only").await;

    // An edited copy is put back.
    let member0 =
        ResourceClient::<ConfigMap>::namespaced(servers.member(0).unwrap().client(), "default");
    let mut drifted = member0.get("images", &GetOptions::default()).await.unwrap();
    drifted.data = policy("default", "images", &[("mode", "anything")]).data;
    member0
        .update(&drifted, &UpdateOptions::default())
        .await
        .unwrap();
    converged(&servers, &[0], "signed-only").await;

    // Disengage: member-1's Secret goes; policy changes no longer reach it.
    let secrets = ResourceClient::<Secret>::namespaced(servers.hub().client(), "default");
    secrets
        .delete("member-1-kubeconfig", &DeleteOptions::default())
        .await
        .unwrap();
    for _ in 0..500 {
        if controller.clusters() == ["member-0", "member-2"] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(controller.clusters(), ["member-0", "member-2"]);
    let writes_before = controller.writes("member-1", "images");
    set_mode(&servers, "audit").await;
    converged(&servers, &[0, 2], "audit").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        copy_mode(&servers, 1, "images").await.as_deref(),
        Some("signed-only")
    );
    assert_eq!(controller.writes("member-1", "images"), writes_before);

    // Rotated credentials: member-2's Secret changes; it is re-engaged and converges.
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
    set_mode(&servers, "enforce").await;
    converged(&servers, &[0, 2], "enforce").await;

    // member-1 comes back: it catches up.
    let back = servers.kubeconfig_secret(1, "default").unwrap();
    secrets
        .create(&back, &CreateOptions::default())
        .await
        .unwrap();
    converged(&servers, &[0, 1, 2], "enforce").await;

    // member-2's server stops: the others keep converging.
    servers.stop_member(2);
    set_mode(&servers, "strict").await;
    converged(&servers, &[0, 1], "strict").await;
    controller.shutdown().await.unwrap();
}

/// The member kubeconfigs of the real-cluster twin: `KUBEGEN_FLEET_MEMBERS`, comma-separated
/// (e.g. `/opt/k8s136/admin.kubeconfig,/opt/realk8s/admin.kubeconfig`).
const MEMBERS_VAR: &str = "KUBEGEN_FLEET_MEMBERS";

/// A client for `kubeconfig`.
fn client_of(kubeconfig: &str) -> kubegen_client::Client {
    let path = std::path::Path::new(kubeconfig);
    let yaml = std::fs::read_to_string(path).unwrap();
    let config =
        kubegen_runtime::multicluster::kubeconfig_to_config("member", &yaml, path).unwrap();
    kubegen_client::Client::new(config).unwrap()
}

/// The `mode` of the copy of `images` in `namespace` of `member`.
async fn real_copy_mode(member: &kubegen_client::Client, namespace: &str) -> Option<String> {
    let copies = ResourceClient::<ConfigMap>::namespaced(member.clone(), namespace);
    let copy = copies.get("images", &GetOptions::default()).await.ok()?;
    copy.data?.get("mode").cloned()
}

async fn real_converged(members: &[&kubegen_client::Client], namespace: &str, mode: &str) {
    for _ in 0..300 {
        let mut all = true;
        for member in members {
            all &= real_copy_mode(member, namespace).await.as_deref() == Some(mode);
        }
        if all {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("members did not converge on mode={mode}");
}

/// A hub on the test server whose members are real API servers (v1.36 with its
/// controller-manager, and 1.15): engage both, reconcile into both, disengage one (its copy is
/// left alone), rotate the other's credentials (re-engaged, converges), bring the first back.
/// Works in a `fleet-<suffix>` namespace of each member, deleted at the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs real clusters: set KUBEGEN_FLEET_MEMBERS to two comma-separated kubeconfigs"]
async fn real_members_engage_reconcile_disengage_and_rotate_on_cluster() {
    use k8s_openapi::api::core::v1::Namespace;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    let Ok(paths) = std::env::var(MEMBERS_VAR) else {
        println!("skipped: {MEMBERS_VAR} is not set");
        return;
    };
    let paths: Vec<String> = paths.split(',').map(str::to_owned).collect();
    assert_eq!(paths.len(), 2, "{MEMBERS_VAR} names two kubeconfigs");
    let namespace = format!("fleet-{}", kubegen_examples::target::unique_suffix());
    let servers = TestFleet::start(0).await;
    let hub = servers.hub().client();
    let members: Vec<kubegen_client::Client> = paths.iter().map(|p| client_of(p)).collect();
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
    let secrets = ResourceClient::<Secret>::namespaced(hub.clone(), &namespace);
    let names = ["real-a", "real-b"];
    for (name, path) in names.iter().zip(&paths) {
        let yaml = std::fs::read_to_string(path).unwrap();
        let secret = kubeconfig_secret(name, &namespace, &yaml);
        secrets
            .create(&secret, &CreateOptions::default())
            .await
            .unwrap();
    }
    let options = FleetPolicyOptions {
        secrets_namespace: namespace.clone(),
        namespace: namespace.clone(),
        probe_period: Duration::from_millis(500),
    };
    let controller = FleetPolicy::start(hub.clone(), &options);
    let policies = ResourceClient::<ConfigMap>::namespaced(hub.clone(), &namespace);
    let images = policy(&namespace, "images", &[("mode", "signed-only")]);
    policies
        .create(&images, &CreateOptions::default())
        .await
        .unwrap();
    let (a, b) = (&members[0], &members[1]);
    real_converged(&[a, b], &namespace, "signed-only").await;

    let update = |mode: &'static str| {
        let (policies, namespace) = (policies.clone(), namespace.clone());
        async move {
            let mut current = policies
                .get("images", &GetOptions::default())
                .await
                .unwrap();
            current.data = policy(&namespace, "images", &[("mode", mode)]).data;
            policies
                .update(&current, &UpdateOptions::default())
                .await
                .unwrap();
        }
    };
    // Disengage real-b: its copy stays as it was.
    secrets
        .delete("real-b-kubeconfig", &DeleteOptions::default())
        .await
        .unwrap();
    for _ in 0..300 {
        if controller.clusters() == ["real-a"] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(controller.clusters(), ["real-a"]);
    update("audit").await;
    real_converged(&[a], &namespace, "audit").await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        real_copy_mode(b, &namespace).await.as_deref(),
        Some("signed-only")
    );

    // Rotate real-a's Secret (same credentials, new content): re-engaged, converges again.
    let mut secret = secrets
        .get("real-a-kubeconfig", &GetOptions::default())
        .await
        .unwrap();
    let rotated = format!(
        "{}\n# rotated\n",
        std::fs::read_to_string(&paths[0]).unwrap()
    );
    secret.data = kubeconfig_secret("real-a", &namespace, &rotated).data;
    secrets
        .update(&secret, &UpdateOptions::default())
        .await
        .unwrap();
    update("enforce").await;
    real_converged(&[a], &namespace, "enforce").await;

    // real-b comes back and catches up.
    let yaml = std::fs::read_to_string(&paths[1]).unwrap();
    let back = kubeconfig_secret("real-b", &namespace, &yaml);
    secrets
        .create(&back, &CreateOptions::default())
        .await
        .unwrap();
    real_converged(&[a, b], &namespace, "enforce").await;
    assert_eq!(
        controller.writes("real-b", "images"),
        2,
        "one write at engage, one at return"
    );

    controller.shutdown().await.unwrap();
    for client in &members {
        // Empty first: a server without a namespace controller (the 1.15 one) leaves the
        // namespace Terminating, but holding nothing.
        let copies = ResourceClient::<ConfigMap>::namespaced(client.clone(), &namespace);
        let _ = copies.delete("images", &DeleteOptions::default()).await;
        let namespaces = ResourceClient::<Namespace>::cluster(client.clone());
        let _ = namespaces
            .delete(&namespace, &DeleteOptions::default())
            .await;
    }
}
