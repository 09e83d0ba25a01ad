//! Tests of the embedded set-up against the repository's own `deploy/` (image-police's CRDs,
//! ServiceAccount and RBAC): what it installs, and that the identity it hands out is the
//! ServiceAccount's, with exactly the permissions deploy/rbac.yaml grants.

use kubegen_client::{Config, ListOptions, LoadOptions, ResourceClient};

use super::*;

fn deploy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy")
}

fn read(path: &Path) -> Manifest {
    let mut read = Manifest::read(&[path.to_path_buf()]).unwrap_or_else(|e| panic!("{e}"));
    read.pop()
        .unwrap_or_else(|| panic!("{} holds no manifest", path.display()))
}

#[tokio::test]
async fn the_operator_runs_as_its_service_account_under_its_rbac() {
    let mut embedded = Embedded::start("kubegen-embedded-test")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let deploy = deploy();
    let version = embedded
        .install_crds(
            &read(&deploy.join("crd.yaml")),
            &read(&deploy.join("crd-v1beta1.yaml")),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(version, CrdVersion::V1);
    embedded
        .install(
            &Manifest::read(&[deploy.join("sa.yaml"), deploy.join("rbac.yaml")])
                .unwrap_or_else(|e| panic!("{e}")),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        embedded
            .created()
            .contains(&"CustomResourceDefinition whitelists.police.example.com".to_owned()),
        "{:?}",
        embedded.created()
    );
    let path = embedded
        .run_as("image-police", "image-police")
        .await
        .unwrap_or_else(|e| panic!("{e:#}"));
    let banner = embedded.banner();
    assert!(
        banner.contains(&format!("  controller kubeconfig: {}\n", path.display())),
        "{banner}"
    );
    assert!(
        banner.contains("runs as ServiceAccount image-police/image-police"),
        "{banner}"
    );

    let mut load = LoadOptions::default();
    load.kubeconfig_path = Some(path.clone());
    let config = Config::load(&load).await.unwrap_or_else(|e| panic!("{e}"));
    let operator = Client::new(config).unwrap_or_else(|e| panic!("{e}"));
    let deployments =
        ResourceClient::<k8s_openapi::api::apps::v1::Deployment>::all_namespaces(operator.clone());
    deployments
        .list(&ListOptions::default())
        .await
        .unwrap_or_else(|e| panic!("deploy/rbac.yaml grants listing Deployments: {e}"));
    let secrets = ResourceClient::<k8s_openapi::api::core::v1::Secret>::all_namespaces(operator);
    let refused = secrets.list(&ListOptions::default()).await;
    assert!(
        refused
            .as_ref()
            .is_err_and(kubegen_client::Error::is_forbidden),
        "Secrets are not granted: {refused:?}"
    );

    let admin_kubeconfig = embedded.kubeconfig().to_path_buf();
    drop(embedded);
    assert!(
        !path.exists() && !admin_kubeconfig.exists(),
        "the kubeconfigs are removed"
    );
}

/// Polls the server's Nodes until `done` holds of their names, for at most 10 s.
async fn nodes_until(
    client: &kubegen_client::Client,
    done: impl Fn(&[String]) -> bool,
) -> Vec<String> {
    use k8s_openapi::api::core::v1::Node;
    let nodes = ResourceClient::<Node>::cluster(client.clone());
    for _ in 0..100 {
        let list = nodes
            .list(&ListOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<String> = list
            .items
            .into_iter()
            .filter_map(|n| n.metadata.name)
            .collect();
        if done(&names) {
            return names;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the nodes never settled");
}

#[tokio::test]
async fn three_simulated_nodes_run_by_default() {
    let embedded = Embedded::start("kubegen-embedded-nodes")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let names = nodes_until(&embedded.client(), |names| names.len() == 3).await;
    assert_eq!(names, ["nodesim-0", "nodesim-1", "nodesim-2"]);
}

#[tokio::test]
async fn simulated_nodes_can_be_switched_off_or_chosen() {
    let none = Embedded::start_with("kubegen-embedded-no-nodes", None)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // Give a simulator, were one running, time to register its Nodes.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(nodes_until(&none.client(), |_| true).await.is_empty());
    let one = kubegen_nodesim::NodeSimOptions::default()
        .nodes(1)
        .name_prefix("sim-");
    let some = Embedded::start_with("kubegen-embedded-one-node", Some(one))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        nodes_until(&some.client(), |names| !names.is_empty()).await,
        ["sim-0"]
    );
}
