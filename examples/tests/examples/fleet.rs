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
