//! cluster-provisioner: a Cluster gets its Kubeconfig after the injected cloud failures were
//! retried and the creation time was waited out; a deleted Kubeconfig is written again; a
//! deleted Cluster takes its Kubeconfig with it.

use std::time::Duration;

use kubegen_api::clusterprovisioner::v1alpha1::{Cluster, ClusterPhase, Kubeconfig};
use kubegen_client::{DeleteOptions, GetOptions, ResourceClient};
use kubegen_examples::provisioner::cloud::CloudOptions;
use kubegen_examples::provisioner::{self, ClusterProvisioner, ProvisionerOptions};
use kubegen_examples::target::{create_if_absent, unique_suffix};

use crate::harness::{Env, on_both_targets, poll};

on_both_targets!(
    a_cluster_gets_its_kubeconfig_after_retries,
    a_cluster_gets_its_kubeconfig_after_retries_on_testserver,
    a_cluster_gets_its_kubeconfig_after_retries_on_cluster
);

const FAILURES: u32 = 2;

fn options() -> ProvisionerOptions {
    let mut cloud = CloudOptions::default();
    cloud.provision_time = Duration::from_millis(300);
    cloud.fail_first_attempts = FAILURES;
    let mut options = ProvisionerOptions::default();
    options.cloud = cloud;
    options.retry_base = Duration::from_millis(20);
    options
}

async fn a_cluster_gets_its_kubeconfig_after_retries(env: Env) {
    let controller = ClusterProvisioner::start(env.client().clone(), options())
        .await
        .unwrap();
    let name = format!("examples-{}", unique_suffix());
    let cluster = provisioner::sample(&name);
    create_if_absent(env.client(), &cluster).await.unwrap();
    let clusters = ResourceClient::<Cluster>::cluster(env.client().clone());
    let uid = clusters
        .get(&name, &GetOptions::default())
        .await
        .unwrap()
        .metadata
        .uid;
    let kubeconfigs = ResourceClient::<Kubeconfig>::cluster(env.client().clone());

    let written = poll("the Kubeconfig", || async {
        kubeconfigs.get(&name, &GetOptions::default()).await.ok()
    })
    .await;
    assert_eq!(written.spec.cluster_name, name);
    assert_eq!(
        written.spec.server,
        format!("https://{name}.eu-west.clusters.example.invalid:6443")
    );
    assert_eq!(written.spec.secret_name, Some(format!("{name}-kubeconfig")));
    let owner = &written
        .metadata
        .owner_references
        .as_deref()
        .unwrap_or_default()[0];
    assert_eq!(
        (owner.kind.as_str(), &owner.uid, owner.controller),
        ("Cluster", uid.as_ref().unwrap(), Some(true))
    );
    let ready = poll("the Cluster's phase Ready", || async {
        let cluster = clusters.get(&name, &GetOptions::default()).await.ok()?;
        cluster.status?.phase.filter(|p| *p == ClusterPhase::Ready)
    })
    .await;
    assert_eq!(ready, ClusterPhase::Ready);
    // Two injected failures, the accepted create call (requeue-after), the call that found it ready.
    assert_eq!(controller.cloud_calls(&name), FAILURES + 2);

    kubeconfigs
        .delete(&name, &DeleteOptions::default())
        .await
        .unwrap();
    let rewritten = poll("the Kubeconfig written again", || async {
        kubeconfigs
            .get(&name, &GetOptions::default())
            .await
            .ok()
            .filter(|k| k.metadata.uid != written.metadata.uid)
    })
    .await;
    assert_eq!(rewritten.spec, written.spec);

    clusters
        .delete(&name, &DeleteOptions::default())
        .await
        .unwrap();
    poll("the Kubeconfig deleted with its Cluster", || async {
        match kubeconfigs.get(&name, &GetOptions::default()).await {
            Err(error) if error.is_not_found() => Some(()),
            _ => None,
        }
    })
    .await;
    assert_eq!(
        controller.cloud_calls(&name),
        0,
        "the cloud cluster is deleted"
    );
    controller.shutdown().await;
}
