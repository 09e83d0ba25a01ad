use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::PodSpec;

use super::*;

fn bound(node: &str) -> Pod {
    Pod {
        spec: Some(PodSpec {
            node_name: (!node.is_empty()).then(|| node.to_owned()),
            ..PodSpec::default()
        }),
        ..Pod::default()
    }
}

#[test]
fn pods_count_as_newly_bound_when_their_node_name_appears_or_changes() {
    assert!(newly_bound(None, &bound("a")));
    assert!(!newly_bound(None, &bound("")));
    assert!(newly_bound(Some(&bound("")), &bound("a")));
    assert!(!newly_bound(Some(&bound("a")), &bound("a")));
    assert!(newly_bound(Some(&bound("a")), &bound("b")));
}

fn labelled(labels: &[(&str, &str)]) -> Node {
    let mut node = Node::default();
    node.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect::<BTreeMap<_, _>>(),
    );
    node
}

#[test]
fn beta_os_and_arch_labels_follow_the_stable_ones() {
    let node = labelled(&[
        ("kubernetes.io/os", "linux"),
        ("kubernetes.io/arch", "arm64"),
        ("beta.kubernetes.io/arch", "amd64"),
    ]);
    let wanted: BTreeMap<String, String> = [
        ("beta.kubernetes.io/arch".to_owned(), "arm64".to_owned()),
        ("beta.kubernetes.io/os".to_owned(), "linux".to_owned()),
    ]
    .into();
    assert_eq!(labels_to_reconcile(&node), wanted);
    let settled = labelled(&[
        ("kubernetes.io/os", "linux"),
        ("beta.kubernetes.io/os", "linux"),
    ]);
    assert!(labels_to_reconcile(&settled).is_empty());
    assert!(labels_to_reconcile(&labelled(&[("beta.kubernetes.io/os", "x")])).is_empty());
}
