//! The generated fake clientset end to end: typed clients per scope, status subresource,
//! recorded actions, seeding.

use kubegen_api::clusterprovisioner::v1alpha1::{Cluster, ClusterSpec};
use kubegen_api::police::v1beta1::{ImageRule, WhiteList, WhiteListSpec, WhiteListStatus};
use kubegen_client::{CreateOptions, GetOptions, ListOptions, UpdateOptions};
use kubegen_clientset::fake;
use serde_json::json;

fn white_list(name: &str) -> WhiteList {
    WhiteList {
        metadata: kube_core::ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: WhiteListSpec {
            images: vec![ImageRule {
                name: "nginx".into(),
                tags: vec!["1.27".into()],
            }],
            allow_none: None,
        },
        status: None,
    }
}

fn clientset() -> fake::Clientset {
    let namespace =
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}});
    fake::Clientset::new([namespace]).expect("fake clientset")
}

#[tokio::test]
async fn namespaced_kind_create_get_list_are_recorded() {
    let cs = clientset();
    let client = cs.police_v1beta1().white_lists("team-a");
    let created = client
        .create(&white_list("wl"), &CreateOptions::default())
        .await
        .expect("create");
    assert_eq!(created.metadata.namespace.as_deref(), Some("team-a"));
    let got = client.get("wl", &GetOptions::default()).await.expect("get");
    assert_eq!(got.spec, white_list("wl").spec);
    let all = cs
        .police_v1beta1()
        .white_lists_all_namespaces()
        .list(&ListOptions::default())
        .await;
    assert_eq!(all.expect("list").items.len(), 1);
    let actions: Vec<String> = cs.actions().iter().map(ToString::to_string).collect();
    assert_eq!(
        actions,
        [
            "create whitelists team-a",
            "get whitelists team-a/wl",
            "list whitelists"
        ]
    );
}

#[tokio::test]
async fn update_status_writes_only_the_status() {
    let cs = clientset();
    let client = cs.police_v1beta1().white_lists("team-a");
    let mut object = client
        .create(&white_list("wl"), &CreateOptions::default())
        .await
        .expect("create");
    object.status = Some(WhiteListStatus {
        violations_handled: Some(3),
        ..Default::default()
    });
    object.spec.images.clear();
    let updated = client
        .update_status(&object, &UpdateOptions::default())
        .await
        .expect("update_status");
    assert_eq!(updated.status.and_then(|s| s.violations_handled), Some(3));
    assert_eq!(
        updated.spec.images.len(),
        1,
        "the status subresource ignores spec changes"
    );
}

#[tokio::test]
async fn cluster_scoped_kind_has_no_namespace() {
    let cs = clientset();
    let cluster = Cluster {
        metadata: kube_core::ObjectMeta {
            name: Some("prod".into()),
            ..Default::default()
        },
        spec: ClusterSpec {
            kubernetes_version: "1.33.1".into(),
            workers: 3,
            region: None,
        },
        status: None,
    };
    let clusters = cs.clusterprovisioner_v1alpha1().clusters();
    clusters
        .create(&cluster, &CreateOptions::default())
        .await
        .expect("create");
    let got = clusters
        .get("prod", &GetOptions::default())
        .await
        .expect("get");
    assert_eq!(got.metadata.namespace, None);
    assert_eq!(got.spec, cluster.spec);
}

#[tokio::test]
async fn seeded_objects_are_listed() {
    let mut seeded = white_list("seeded");
    seeded.metadata.namespace = Some("team-a".into());
    let seed = serde_json::to_value(&seeded).expect("serializes");
    let namespace =
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}});
    let cs = fake::Clientset::new([namespace, seed]).expect("seeds");
    let list = cs
        .police_v1beta1()
        .white_lists("team-a")
        .list(&ListOptions::default())
        .await;
    let names: Vec<_> = list
        .expect("list")
        .items
        .into_iter()
        .filter_map(|wl| wl.metadata.name)
        .collect();
    assert_eq!(names, ["seeded"]);
    assert!(
        cs.actions().len() == 1,
        "seeding is not recorded, the list is"
    );
}
