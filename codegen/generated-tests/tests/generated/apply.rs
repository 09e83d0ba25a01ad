//! Server-side apply with the generated apply configurations, on the in-process test server and
//! (`_on_cluster`) on the real API server `KUBEGEN_E2E_KUBECONFIG` names, with the same
//! expectations: an apply that sets one field takes ownership of that field alone (compared in
//! `managedFields`), a field another manager owns is a 409 with the server's message, and
//! `extract_<kind>` round-trips (applying what a manager owns changes nothing).

use std::path::PathBuf;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_api::apps::v1::{Deployment, StatefulSet};
use kubegen_api::samplecrd::v1::{Network, NetworkSpec};
use kubegen_applyconfigurations::apps::v1::{
    DeploymentApplyConfiguration, DeploymentSpecApplyConfiguration, StatefulSetApplyConfiguration,
    StatefulSetSpecApplyConfiguration, extract_deployment, extract_stateful_set,
};
use kubegen_applyconfigurations::samplecrd::v1::{
    NetworkApplyConfiguration, NetworkSpecApplyConfiguration, extract_network,
};
use kubegen_client::{
    ApplyOptions, CacheOptions, CachedDiscovery, Client, CreateOptions, ResourceClient, RestMapper,
};
use kubegen_clientset::Clientset;
use kubegen_runtime::crds::CrdVersion;
use serde_json::{Value, json};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The `(operation, fieldsV1)` of each entry of `manager`.
fn managed_by(meta: &ObjectMeta, manager: &str) -> Vec<(String, Value)> {
    meta.managed_fields
        .iter()
        .flatten()
        .filter(|entry| entry.manager.as_deref() == Some(manager))
        .map(|entry| {
            let fields = entry.fields_v1.as_ref().map(|f| f.0.clone());
            (
                entry.operation.clone().unwrap_or_default(),
                fields.unwrap_or_default(),
            )
        })
        .collect()
}

fn deployment(namespace: &str) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    }))
    .unwrap()
}

/// Deployment `web`, created by `creator`: `scaler` applies `spec.replicas` alone.
async fn deployment_scenario(client: Client, namespace: &str) -> TestResult {
    let cs = Clientset::new(client);
    let deployments = cs.apps_v1().deployments(namespace);
    let create = CreateOptions::default().field_manager("creator");
    deployments.create(&deployment(namespace), &create).await?;
    // As stored (with the server's defaults), to compare with after the apply.
    let created = deployments.get("web", &Default::default()).await?;

    let replicas = DeploymentApplyConfiguration::new("web", namespace)
        .with_spec(DeploymentSpecApplyConfiguration::default().with_replicas(3));
    assert_eq!(
        serde_json::to_value(&replicas)?,
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "web", "namespace": namespace}, "spec": {"replicas": 3}})
    );
    let error = deployments
        .apply("web", &replicas, &ApplyOptions::new("scaler"))
        .await
        .expect_err("creator owns spec.replicas");
    if before_apply(&error) {
        return Ok(());
    }
    assert!(error.is_conflict(), "{error}");
    assert_eq!(
        error.status().map(|s| s.message.as_str()),
        Some(
            "Apply failed with 1 conflict: conflict with \"creator\" using apps/v1: .spec.replicas"
        )
    );

    let applied = deployments
        .apply("web", &replicas, &ApplyOptions::new("scaler").force(true))
        .await?;
    assert_eq!(applied.spec.as_ref().and_then(|s| s.replicas), Some(3));
    assert_eq!(
        managed_by(&applied.metadata, "scaler"),
        [("Apply".to_owned(), json!({"f:spec": {"f:replicas": {}}}))]
    );
    let template = |d: &Deployment| d.spec.as_ref().map(|s| s.template.clone());
    assert_eq!(template(&applied), template(&created), "untouched");

    let extracted = extract_deployment(&applied, "scaler")?;
    assert_eq!(extracted, replicas);
    let again = deployments
        .apply("web", &extracted, &ApplyOptions::new("scaler"))
        .await?;
    // The deployment controller writes status meanwhile on a real cluster, so the
    // resourceVersion may move: the spec and the ownership must not.
    assert_eq!(
        again.spec, applied.spec,
        "applying what the manager owns is a no-op"
    );
    assert_eq!(
        managed_by(&again.metadata, "scaler"),
        managed_by(&applied.metadata, "scaler")
    );
    Ok(())
}

/// StatefulSet `db`, created by `creator`: `scaler` applies `spec.replicas` alone. The case
/// k8s-openapi's structs get wrong (k8s-openapi issue 112): `StatefulSetSpec` serialises its
/// required `selector` (and, before 1.33, `serviceName`), so an apply built from it would take
/// ownership of them too.
async fn stateful_set_scenario(client: Client, namespace: &str) -> TestResult {
    let cs = Clientset::new(client);
    let stateful_sets = cs.apps_v1().stateful_sets(namespace);
    let stateful_set: StatefulSet = serde_json::from_value(json!({
        "metadata": {"name": "db", "namespace": namespace},
        "spec": {
            "replicas": 1,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "db", "image": "postgres:17"}]},
            },
        },
    }))?;
    let create = CreateOptions::default().field_manager("creator");
    stateful_sets.create(&stateful_set, &create).await?;
    let created = stateful_sets.get("db", &Default::default()).await?;

    let replicas = StatefulSetApplyConfiguration::new("db", namespace)
        .with_spec(StatefulSetSpecApplyConfiguration::default().with_replicas(3));
    assert_eq!(
        serde_json::to_value(&replicas)?["spec"],
        json!({"replicas": 3}),
        "nothing but replicas is sent"
    );
    let applied = match stateful_sets
        .apply("db", &replicas, &ApplyOptions::new("scaler").force(true))
        .await
    {
        Err(error) if before_apply(&error) => return Ok(()),
        other => other?,
    };
    assert_eq!(applied.spec.as_ref().and_then(|s| s.replicas), Some(3));
    assert_eq!(
        managed_by(&applied.metadata, "scaler"),
        [("Apply".to_owned(), json!({"f:spec": {"f:replicas": {}}}))],
        "scaler owns replicas alone"
    );
    let selector = |s: &StatefulSet| s.spec.as_ref().map(|spec| spec.selector.clone());
    assert_eq!(selector(&applied), selector(&created), "untouched");
    assert_eq!(extract_stateful_set(&applied, "scaler")?, replicas);
    Ok(())
}

/// Network `net`, created by `creator`: `gateway-manager` applies `spec.gateway` alone, then
/// `mtu-manager` applies `spec.mtu: null`.
async fn network_scenario(client: Client, namespace: &str) -> TestResult {
    let cs = Clientset::new(client);
    let networks = cs.samplecrd_v1().networks(namespace);
    let network = Network {
        metadata: ObjectMeta {
            name: Some("net".into()),
            ..Default::default()
        },
        spec: NetworkSpec {
            cidr: "10.0.0.0/16".into(),
            gateway: "10.0.0.1".into(),
            mtu: Some(Some(9000)),
        },
    };
    let create = CreateOptions::default().field_manager("creator");
    networks.create(&network, &create).await?;

    let gateway = NetworkApplyConfiguration::new("net", namespace)
        .with_spec(NetworkSpecApplyConfiguration::default().with_gateway("10.0.0.254".into()));
    let error = networks
        .apply("net", &gateway, &ApplyOptions::new("gateway-manager"))
        .await
        .expect_err("creator owns spec.gateway");
    if before_apply(&error) {
        return Ok(());
    }
    assert_eq!(
        error.status().map(|s| (s.code, s.message.as_str())),
        Some((
            409,
            "Apply failed with 1 conflict: conflict with \"creator\" using samplecrd.example.com/v1: .spec.gateway"
        ))
    );
    let applied = networks
        .apply(
            "net",
            &gateway,
            &ApplyOptions::new("gateway-manager").force(true),
        )
        .await?;
    assert_eq!(
        (applied.spec.cidr.as_str(), applied.spec.gateway.as_str()),
        ("10.0.0.0/16", "10.0.0.254")
    );
    assert_eq!(
        managed_by(&applied.metadata, "gateway-manager"),
        [("Apply".to_owned(), json!({"f:spec": {"f:gateway": {}}}))]
    );
    let extracted = extract_network(&applied, "gateway-manager")?;
    assert_eq!(extracted, gateway);
    let again = networks
        .apply("net", &extracted, &ApplyOptions::new("gateway-manager"))
        .await?;
    assert_eq!(
        again.metadata.resource_version,
        applied.metadata.resource_version
    );

    // `null` in a nullable field is a value an apply sets and owns, taking it from the creator's
    // 9000; extracted, it is `null` again, not absent.
    let default_mtu = NetworkApplyConfiguration::new("net", namespace)
        .with_spec(NetworkSpecApplyConfiguration::default().with_mtu_null());
    let nulled = networks
        .apply(
            "net",
            &default_mtu,
            &ApplyOptions::new("mtu-manager").force(true),
        )
        .await?;
    assert_eq!(nulled.spec.mtu, Some(None));
    assert_eq!(
        managed_by(&nulled.metadata, "mtu-manager"),
        [("Apply".to_owned(), json!({"f:spec": {"f:mtu": {}}}))]
    );
    assert_eq!(extract_network(&nulled, "mtu-manager")?, default_mtu);
    Ok(())
}

/// Whether the server predates server-side apply (Kubernetes 1.15: 415), which the client must
/// report as `ApplyUnsupported`; the rest of a scenario needs apply.
fn before_apply(error: &kubegen_client::Error) -> bool {
    let unsupported = matches!(error, kubegen_client::Error::ApplyUnsupported { .. });
    if unsupported {
        eprintln!(
            "the server has no server-side apply (before 1.16): ApplyUnsupported, as expected"
        );
    }
    unsupported
}

/// Applies deploy/crd.yaml, so that a cluster several runs share has this checkout's schema
/// (`crds::install` leaves an existing CRD as it is); on a server without v1 CRDs (1.15), which
/// has no apply either, installs deploy/crd-v1beta1.yaml.
async fn install_crds(client: &Client) {
    let deploy = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../deploy"));
    let (v1, v1beta1) = (deploy.join("crd.yaml"), deploy.join("crd-v1beta1.yaml"));
    let (manifest, version) = kubegen_runtime::crds::manifest_for(client, &v1, &v1beta1)
        .await
        .unwrap();
    let yaml = std::fs::read_to_string(manifest).unwrap();
    if version == CrdVersion::V1beta1 {
        kubegen_runtime::crds::install(client, &yaml).await.unwrap();
        return;
    }
    let mapper = RestMapper::new(Arc::new(CachedDiscovery::new(
        client.clone(),
        CacheOptions::default(),
    )));
    let options = ApplyOptions::new("kubegen-generated-tests").force(true);
    kubegen_runtime::apply::apply_yaml(client, &mapper, "deploy/crd.yaml", &yaml, &options)
        .await
        .unwrap();
}

async fn in_process() -> (kubegen_testserver::TestServer, Client) {
    let server = kubegen_testserver::TestServer::start().await;
    let client = server.client();
    install_crds(&client).await;
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}});
    let namespaces =
        ResourceClient::<k8s_openapi::api::core::v1::Namespace>::cluster(client.clone());
    namespaces
        .create(
            &serde_json::from_value(namespace).unwrap(),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    (server, client)
}

#[tokio::test]
async fn applying_one_deployment_field_owns_it_alone_and_extract_round_trips() {
    let (_server, client) = in_process().await;
    deployment_scenario(client, "ns").await.unwrap();
}

#[tokio::test]
async fn applying_one_stateful_set_field_owns_it_alone() {
    let (_server, client) = in_process().await;
    stateful_set_scenario(client, "ns").await.unwrap();
}

#[tokio::test]
async fn applying_one_custom_resource_field_owns_it_alone_and_extract_round_trips() {
    let (_server, client) = in_process().await;
    network_scenario(client, "ns").await.unwrap();
}

/// Runs `scenario` on the real cluster, with the CRDs installed, in a fresh namespace that is
/// deleted afterwards.
async fn on_cluster<F, Fut>(prefix: &str, scenario: F)
where
    F: FnOnce(Client, String) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let client = kubegen_e2e_support::cluster_client().await;
    install_crds(&client).await;
    kubegen_e2e_support::in_scratch_namespace(&client, prefix, scenario).await;
}

#[tokio::test]
#[ignore = "needs a real cluster: set KUBEGEN_E2E_KUBECONFIG"]
async fn applying_one_deployment_field_owns_it_alone_on_cluster() {
    on_cluster("kubegen-apply-deploy-", |client, namespace| async move {
        deployment_scenario(client, &namespace).await.unwrap();
    })
    .await;
}

#[tokio::test]
#[ignore = "needs a real cluster: set KUBEGEN_E2E_KUBECONFIG"]
async fn applying_one_stateful_set_field_owns_it_alone_on_cluster() {
    on_cluster("kubegen-apply-sts-", |client, namespace| async move {
        stateful_set_scenario(client, &namespace).await.unwrap();
    })
    .await;
}

#[tokio::test]
#[ignore = "needs a real cluster: set KUBEGEN_E2E_KUBECONFIG"]
async fn applying_one_custom_resource_field_owns_it_alone_on_cluster() {
    on_cluster("kubegen-apply-net-", |client, namespace| async move {
        network_scenario(client, &namespace).await.unwrap();
    })
    .await;
}
