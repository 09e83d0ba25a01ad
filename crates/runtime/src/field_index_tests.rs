use k8s_openapi::api::core::v1::{Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_cache::{IndexFn, Indexers};

use super::*;

fn pod(namespace: &str, name: &str, node: &str, app: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            namespace: Some(namespace.into()),
            name: Some(name.into()),
            labels: Some([("app".to_owned(), app.to_owned())].into()),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            node_name: Some(node.into()).filter(|n: &String| !n.is_empty()),
            ..PodSpec::default()
        }),
        ..Pod::default()
    }
}

/// An indexer of pods with an index over `spec.nodeName` and one over `spec.restartPolicy`
/// filed as `CachedClient::index_field` files them.
fn pods() -> Indexer<Pod> {
    let indexer = Indexer::new();
    let node: IndexFn<Pod> = Arc::new(|pod: &Pod| {
        let raw = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .into_iter()
            .collect();
        filed_values(pod.metadata.namespace.as_deref(), raw)
    });
    let app: IndexFn<Pod> = Arc::new(|pod: &Pod| {
        let raw = pod
            .metadata
            .labels
            .iter()
            .flat_map(|l| l.get("app").cloned())
            .collect();
        filed_values(pod.metadata.namespace.as_deref(), raw)
    });
    let indexers: Indexers<Pod> = [
        (index_name("spec.nodeName"), node),
        (index_name("app"), app),
    ]
    .into_iter()
    .collect();
    indexer.add_indexers(indexers).unwrap();
    for pod in [
        pod("a", "web-1", "n1", "web"),
        pod("a", "web-2", "n2", "web"),
        pod("a", "db-1", "n1", "db"),
        pod("b", "web-1", "n1", "web"),
        pod("b", "pending", "", "web"),
    ] {
        indexer.insert(ObjectKey::of(&pod), Arc::new(pod));
    }
    indexer
}

fn names(pods: &[Arc<Pod>]) -> Vec<String> {
    let mut names: Vec<String> = pods
        .iter()
        .map(|p| ObjectKey::of(p.as_ref()).as_str().to_owned())
        .collect();
    names.sort();
    names
}

fn select_names(
    namespace: Option<&str>,
    fields: &[(&str, &str)],
    labels: &Selector,
) -> Result<Vec<String>, Error> {
    let fields = MatchingFields::new(fields.iter().copied());
    select(&pods(), "Pod", namespace, &fields, labels).map(|p| names(&p))
}

#[test]
fn an_index_answers_namespaced_and_cluster_wide_lists() {
    let all = Selector::default();
    assert_eq!(
        select_names(Some("a"), &[("spec.nodeName", "n1")], &all).unwrap(),
        ["a/db-1", "a/web-1"]
    );
    assert_eq!(
        select_names(None, &[("spec.nodeName", "n1")], &all).unwrap(),
        ["a/db-1", "a/web-1", "b/web-1"]
    );
    assert!(
        select_names(None, &[("spec.nodeName", "n9")], &all)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn several_fields_intersect_and_labels_filter_the_result() {
    let all = Selector::default();
    assert_eq!(
        select_names(None, &[("spec.nodeName", "n1"), ("app", "web")], &all).unwrap(),
        ["a/web-1", "b/web-1"]
    );
    let db: Selector = kube_core::Expression::Equal("app".into(), "db".into()).into();
    assert_eq!(
        select_names(None, &[("spec.nodeName", "n1")], &db).unwrap(),
        ["a/db-1"]
    );
}

#[test]
fn metadata_name_and_namespace_need_no_index() {
    let all = Selector::default();
    assert_eq!(
        select_names(None, &[("metadata.name", "web-1")], &all).unwrap(),
        ["a/web-1", "b/web-1"]
    );
    assert_eq!(
        select_names(None, &[("metadata.namespace", "b")], &all).unwrap(),
        ["b/pending", "b/web-1"]
    );
    assert_eq!(
        select_names(
            None,
            &[
                ("metadata.namespace", "a"),
                ("metadata.name", "web-1"),
                ("spec.nodeName", "n1")
            ],
            &all
        )
        .unwrap(),
        ["a/web-1"]
    );
    // A namespace that contradicts the list's namespace selects nothing.
    assert!(
        select_names(Some("a"), &[("metadata.namespace", "b")], &all)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_field_without_an_index_is_an_error_naming_it() {
    let err = select_names(
        Some("a"),
        &[("status.phase", "Running")],
        &Selector::default(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "listing Pod by field \"status.phase\": index with name field:status.phase does not exist (register it with CachedClient::index_field)"
    );
}

#[test]
fn selectors_parse_exact_requirements_and_refuse_inequality() {
    assert_eq!(
        MatchingFields::parse("spec.nodeName=n1, status.phase==Running").unwrap(),
        MatchingFields::new([("spec.nodeName", "n1"), ("status.phase", "Running")])
    );
    assert!(MatchingFields::parse("").unwrap().is_empty());
    for bad in ["spec.nodeName!=n1", "spec.nodeName", "=x"] {
        let err = MatchingFields::parse(bad).unwrap_err();
        assert!(
            err.to_string()
                .contains("non-exact field matches are not supported by the cache"),
            "{bad}: {err}"
        );
    }
}

#[test]
fn values_are_filed_per_namespace_and_for_all_namespaces() {
    assert_eq!(
        filed_values(Some("a"), vec!["n1".into()]),
        ["a/n1", "__all_namespaces/n1"]
    );
    assert_eq!(
        filed_values(None, vec!["n1".into()]),
        ["__all_namespaces/n1"]
    );
}
