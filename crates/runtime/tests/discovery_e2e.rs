//! Discovery, the RESTMapper, dynamic informers and multi-document apply, end to end: against
//! kubegen-testserver (always) and against a real cluster when `KUBEGEN_E2E_KUBECONFIG` names a
//! kubeconfig (the `_on_cluster` variants are `#[ignore]`d, so without a cluster nextest counts
//! them as skipped; `scripts/test.sh` runs them when the variable is set). Run against v1.36
//! (aggregated discovery, server-side apply, `apiextensions.k8s.io/v1`) and v1.15 (classic
//! discovery, create-or-update, `v1beta1` CRDs).
//!
//! Each scenario works in a namespace and a CRD group of its own (named after the process id)
//! and deletes them afterwards, whatever happened.

use std::sync::Arc;
use std::time::Duration;

use kubegen_cache::{ClientListWatchSource, FactoryOptions, InformerFactory};
use kubegen_client::{
    ApplyOptions, CacheOptions, CachedDiscovery, Client, DeleteOptions, ResourceClient, RestMapper,
};
use kubegen_runtime::apply::{Outcome, apply_yaml};
use kubegen_runtime::crds::{CrdVersion, served_version};
use kubegen_testserver::TestServer;
use serde_json::json;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn mapper(client: &Client) -> RestMapper {
    RestMapper::new(Arc::new(CachedDiscovery::new(
        client.clone(),
        CacheOptions::default(),
    )))
}

/// The names one scenario uses: its namespace and the group of its CRD.
struct Names {
    namespace: String,
    group: String,
}

impl Names {
    fn new(scenario: &str) -> Names {
        let id = std::process::id();
        Names {
            namespace: format!("kubegen-{scenario}-{id}"),
            group: format!("{scenario}{id}.kubegen.example.com"),
        }
    }

    fn crd_name(&self) -> String {
        format!("probes.{}", self.group)
    }

    /// The YAML of a namespaced CRD `Probe` in the version the server takes.
    fn crd(&self, version: CrdVersion) -> String {
        let group = &self.group;
        match version {
            CrdVersion::V1 => format!(
                "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {{name: probes.{group}}}\nspec:\n  group: {group}\n  scope: Namespaced\n  names: {{plural: probes, singular: probe, kind: Probe, shortNames: [prb]}}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}\n"
            ),
            CrdVersion::V1beta1 => format!(
                "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata: {{name: probes.{group}}}\nspec:\n  group: {group}\n  scope: Namespaced\n  names: {{plural: probes, singular: probe, kind: Probe, shortNames: [prb]}}\n  version: v1\n  versions:\n  - name: v1\n    served: true\n    storage: true\n"
            ),
        }
    }

    fn probe(&self, name: &str, size: u32) -> String {
        format!(
            "apiVersion: {}/v1\nkind: Probe\nmetadata: {{name: {name}, namespace: {}}}\nspec: {{size: {size}}}\n",
            self.group, self.namespace
        )
    }

    fn namespace_yaml(&self) -> String {
        format!(
            "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {}}}\n",
            self.namespace
        )
    }

    /// Deletes the namespace and the CRD (either may be missing).
    async fn clean_up(&self, client: &Client) {
        let mapper = mapper(client);
        for (api_version, kind, name) in [
            ("v1", "Namespace", self.namespace.clone()),
            (
                "apiextensions.k8s.io/v1",
                "CustomResourceDefinition",
                self.crd_name(),
            ),
            (
                "apiextensions.k8s.io/v1beta1",
                "CustomResourceDefinition",
                self.crd_name(),
            ),
        ] {
            if let Ok(mapping) = mapper.mapping_for(api_version, kind).await {
                let api = ResourceClient::dynamic(client.clone(), &mapping.resource, None);
                let _ = api.delete(&name, &DeleteOptions::default()).await;
            }
        }
    }
}

// (a) A dynamic informer over a CRD no code was generated for.

async fn dynamic_informer(client: Client) -> TestResult {
    let names = Names::new("dyninf");
    let outcome = dynamic_informer_steps(&client, &names).await;
    names.clean_up(&client).await;
    outcome
}

async fn dynamic_informer_steps(client: &Client, names: &Names) -> TestResult {
    let version = served_version(client).await?;
    let yaml = format!(
        "{}---\n{}---\n{}",
        names.namespace_yaml(),
        names.crd(version),
        names.probe("before", 1)
    );
    apply_yaml(
        client,
        &mapper(client),
        "informer.yaml",
        &yaml,
        &ApplyOptions::new("kubegen-e2e"),
    )
    .await?;
    let probes = mapper(client)
        .mapping_for_resource(&format!("prb.{}", names.group))
        .await?;
    assert_eq!(
        (probes.resource.kind.as_str(), probes.namespaced),
        ("Probe", true)
    );
    let factory = InformerFactory::new(
        ClientListWatchSource::new(client.clone()),
        FactoryOptions::default().namespace(names.namespace.clone()),
    );
    let informer = factory.dynamic_informer_for(&probes);
    factory.start();
    factory.wait_for_cache_sync(Duration::from_secs(30)).await?;
    let lister = informer.lister().namespaced(&names.namespace);
    assert!(
        lister.get("before").is_some(),
        "the synced cache holds the existing object"
    );
    apply_yaml(
        client,
        &mapper(client),
        "after.yaml",
        &names.probe("after", 2),
        &ApplyOptions::new("kubegen-e2e"),
    )
    .await?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let after = loop {
        if let Some(after) = lister.get("after") {
            break after;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the informer never saw the create"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(after.data["spec"]["size"], 2);
    factory.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_dynamic_informer_over_a_crd_without_code_syncs_and_sees_a_create_on_testserver()
-> TestResult {
    dynamic_informer(TestServer::start().await.client()).await
}

#[tokio::test]
#[ignore = "needs a real cluster: scripts/test.sh runs it when KUBEGEN_E2E_KUBECONFIG is set"]
async fn a_dynamic_informer_over_a_crd_without_code_syncs_and_sees_a_create_on_cluster()
-> TestResult {
    dynamic_informer(kubegen_e2e_support::cluster_client().await).await
}

// (b) The RESTMapper maps every kind the server serves back to its resource.

/// Whether a group is the server's own: the core group, a group without a dot (`apps`, `batch`),
/// or one under `k8s.io`. A CRD's group always has a dot, and `*.k8s.io` groups need an API
/// approval, so the CRDs that other tests create and delete in parallel on the same cluster
/// never fall in here: their groups may vanish between the discovery and the mapper's lookups.
fn built_in(group_version: &str) -> bool {
    match group_version.rsplit_once('/') {
        None => true,
        Some((group, _)) => !group.contains('.') || group.ends_with(".k8s.io"),
    }
}

async fn maps_every_kind(client: Client) -> TestResult {
    let discovered = kubegen_client::discovery::server_resources(&client).await?;
    let failed: Vec<_> = discovered
        .failed
        .iter()
        .filter(|(group_version, _)| built_in(group_version))
        .collect();
    assert!(failed.is_empty(), "{failed:?}");
    let mapper = mapper(&client);
    let mut checked = 0;
    for (group_version, list) in discovered
        .resources
        .iter()
        .filter(|(group_version, _)| built_in(group_version))
    {
        for resource in list.resources.iter().filter(|r| !r.name.contains('/')) {
            let by_kind = mapper.mapping_for(group_version, &resource.kind).await?;
            assert_eq!(
                (by_kind.resource.plural.as_str(), by_kind.namespaced),
                (resource.name.as_str(), resource.namespaced),
                "{group_version} {}",
                resource.kind
            );
            let qualified = match group_version.split_once('/') {
                Some((group, version)) => format!("{}.{version}.{group}", resource.name),
                None => resource.name.clone(),
            };
            let by_name = mapper.mapping_for_resource(&qualified).await?;
            assert_eq!(by_name.resource.api_version, *group_version, "{qualified}");
            assert_eq!(by_name.resource.kind, resource.kind, "{qualified}");
            checked += 1;
        }
    }
    println!(
        "mapped {checked} resources (aggregated discovery: {})",
        discovered.aggregated
    );
    // The test server serves over 20 built-in resources, v1.36 and v1.15 several dozen.
    assert!(checked >= 20, "only {checked} resources");
    // 1.15 serves Deployments in extensions/v1beta1 too, and lists that group first: the short
    // name goes to the first group declaring it, as with kubectl 1.15 (`deployment.extensions`).
    let deployments = mapper.mapping_for_resource("deploy").await?;
    assert_eq!(
        (
            deployments.resource.kind.as_str(),
            deployments.resource.plural.as_str()
        ),
        ("Deployment", "deployments")
    );
    assert!(
        deployments.subresources.contains(&"scale".to_owned()),
        "{:?}",
        deployments.subresources
    );
    Ok(())
}

#[tokio::test]
async fn the_rest_mapper_maps_every_served_kind_on_testserver() -> TestResult {
    maps_every_kind(TestServer::start().await.client()).await
}

#[tokio::test]
#[ignore = "needs a real cluster: scripts/test.sh runs it when KUBEGEN_E2E_KUBECONFIG is set"]
async fn the_rest_mapper_maps_every_served_kind_on_cluster() -> TestResult {
    maps_every_kind(kubegen_e2e_support::cluster_client().await).await
}

// (c) Applying a multi-document YAML: Namespace, CR before its CRD, ConfigMap.

async fn applies_a_multi_document_yaml(client: Client) -> TestResult {
    let names = Names::new("apply");
    let outcome = apply_steps(&client, &names).await;
    names.clean_up(&client).await;
    outcome
}

async fn apply_steps(client: &Client, names: &Names) -> TestResult {
    let version = served_version(client).await?;
    let config_map = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: settings, namespace: {}}}\ndata: {{mode: fast}}\n",
        names.namespace
    );
    let yaml = format!(
        "{}---\n{}---\n{}---\n{config_map}",
        names.namespace_yaml(),
        names.probe("first", 3),
        names.crd(version)
    );
    let options = ApplyOptions::new("kubegen-e2e");
    let applied = apply_yaml(client, &mapper(client), "multi.yaml", &yaml, &options).await?;
    let order: Vec<usize> = applied.iter().map(|a| a.index).collect();
    assert_eq!(order, [3, 1, 2, 4], "CRDs first, then file order");
    let server_side = applied[0].outcome == Outcome::Applied;
    println!(
        "server-side apply: {server_side}; outcomes {:?}",
        applied.iter().map(|a| a.outcome).collect::<Vec<_>>()
    );

    let again = apply_yaml(
        client,
        &mapper(client),
        "multi.yaml",
        &yaml.replace("size: 3", "size: 4"),
        &options,
    )
    .await?;
    let expected = if server_side {
        Outcome::Applied
    } else {
        Outcome::Updated
    };
    assert!(again.iter().all(|a| a.outcome == expected), "{again:?}");
    let probes = mapper(client)
        .mapping_for(&format!("{}/v1", names.group), "Probe")
        .await?;
    let probe = ResourceClient::dynamic(client.clone(), &probes.resource, Some(&names.namespace))
        .get("first", &Default::default())
        .await?;
    assert_eq!(probe.data["spec"]["size"], 4);
    let config_maps = mapper(client).mapping_for("v1", "ConfigMap").await?;
    let settings = ResourceClient::dynamic(
        client.clone(),
        &config_maps.resource,
        Some(&names.namespace),
    )
    .get("settings", &Default::default())
    .await?;
    assert_eq!(settings.data["data"], json!({"mode": "fast"}));
    let unknown = format!(
        "apiVersion: {}/v9\nkind: Probe\nmetadata: {{name: x, namespace: {}}}\n",
        names.group, names.namespace
    );
    let error = apply_yaml(client, &mapper(client), "unknown.yaml", &unknown, &options)
        .await
        .err()
        .ok_or("applied an unserved version")?;
    assert_eq!(
        error.to_string(),
        format!("unknown.yaml: document 1 (Probe x) failed")
    );
    let cause = std::error::Error::source(&error)
        .map(ToString::to_string)
        .unwrap_or_default();
    assert_eq!(
        cause,
        format!(
            "no matches for kind \"Probe\" in version \"{}/v9\"",
            names.group
        )
    );
    Ok(())
}

#[tokio::test]
async fn a_multi_document_yaml_with_a_crd_and_its_objects_applies_on_testserver() -> TestResult {
    applies_a_multi_document_yaml(TestServer::start().await.client()).await
}

#[tokio::test]
#[ignore = "needs a real cluster: scripts/test.sh runs it when KUBEGEN_E2E_KUBECONFIG is set"]
async fn a_multi_document_yaml_with_a_crd_and_its_objects_applies_on_cluster() -> TestResult {
    applies_a_multi_document_yaml(kubegen_e2e_support::cluster_client().await).await
}
