//! Every CRD in deploy/crd.yaml is accepted by the in-process API server, and a sample object of
//! each kind round-trips through the generated typed clients.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kubegen_api::cloudnative::v1alpha1::{VirtualMachine, VirtualMachineSpec};
use kubegen_api::clusterprovisioner::v1alpha1::{Kubeconfig, KubeconfigSpec};
use kubegen_api::police::v1beta1::{ImageRule, WhiteList, WhiteListSpec};
use kubegen_api::samplecrd::v1::{Network, NetworkSpec};
use kubegen_client::{CreateOptions, GetOptions, ResourceClient};
use kubegen_fake::FakeClient;

fn crds() -> Vec<CustomResourceDefinition> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../deploy/crd.yaml");
    let text = std::fs::read_to_string(path).expect("deploy/crd.yaml exists");
    text.split("\n---\n")
        .filter(|doc| doc.contains("kind: CustomResourceDefinition"))
        .map(|doc| serde_yaml::from_str(doc).expect("a valid CustomResourceDefinition"))
        .collect()
}

fn meta(name: &str) -> kube_core::ObjectMeta {
    kube_core::ObjectMeta {
        name: Some(name.into()),
        ..Default::default()
    }
}

#[tokio::test]
async fn generated_crds_are_served_and_round_trip_a_sample_of_each_kind() {
    let fake = FakeClient::new();
    let crds = crds();
    let names: Vec<_> = crds
        .iter()
        .filter_map(|crd| crd.metadata.name.clone())
        .collect();
    assert_eq!(
        names,
        [
            "virtualmachines.cloudnative.example.com",
            "clusters.clusterprovisioner.example.com",
            "kubeconfigs.clusterprovisioner.example.com",
            "whitelists.police.example.com",
            "networks.samplecrd.example.com",
        ]
    );
    let api = ResourceClient::<CustomResourceDefinition>::cluster(fake.client());
    for crd in &crds {
        api.create(crd, &CreateOptions::default())
            .await
            .expect("CRD accepted");
    }
    let namespace =
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}});
    fake.seed([namespace]).expect("namespace");
    let cs = kubegen_clientset::Clientset::new(fake.client());
    let (create, get) = (CreateOptions::default(), GetOptions::default());

    let wl = WhiteList {
        metadata: meta("wl"),
        spec: WhiteListSpec {
            images: vec![ImageRule {
                name: "nginx".into(),
                tags: vec!["1.27".into()],
            }],
            allow_none: Some(false),
        },
        status: None,
    };
    let client = cs.police_v1beta1().white_lists("ns");
    client.create(&wl, &create).await.expect("create WhiteList");
    assert_eq!(client.get("wl", &get).await.expect("get").spec, wl.spec);

    let vm = VirtualMachine {
        metadata: meta("vm"),
        spec: VirtualMachineSpec {
            cpu: 2,
            memory: k8s_openapi::apimachinery::pkg::api::resource::Quantity("4Gi".into()),
            image: "debian-13".into(),
            annotations: [("zone".to_owned(), "a".to_owned())].into(),
            ..VirtualMachineSpec::default()
        },
        status: None,
    };
    let client = cs.cloudnative_v1alpha1().virtual_machines("ns");
    client
        .create(&vm, &create)
        .await
        .expect("create VirtualMachine");
    assert_eq!(client.get("vm", &get).await.expect("get").spec, vm.spec);

    let kubeconfig = Kubeconfig {
        metadata: meta("prod"),
        spec: KubeconfigSpec {
            cluster_name: "prod".into(),
            server: "https://prod:6443".into(),
            secret_name: None,
        },
    };
    let client = cs.clusterprovisioner_v1alpha1().kubeconfigs();
    client
        .create(&kubeconfig, &create)
        .await
        .expect("create Kubeconfig");
    assert_eq!(
        client.get("prod", &get).await.expect("get").spec,
        kubeconfig.spec
    );

    let network = Network {
        metadata: meta("net"),
        spec: NetworkSpec {
            cidr: "10.0.0.0/16".into(),
            gateway: "10.0.0.1".into(),
            mtu: None,
        },
    };
    let client = cs.samplecrd_v1().networks("ns");
    client
        .create(&network, &create)
        .await
        .expect("create Network");
    assert_eq!(
        client.get("net", &get).await.expect("get").spec,
        network.spec
    );
}
