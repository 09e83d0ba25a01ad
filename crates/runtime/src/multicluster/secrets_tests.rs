use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::*;
use crate::multicluster::provider::ClusterEvent;

fn secret(name: &str, labels: &[(&str, &str)], data: &[(&str, &str)]) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("fleet".to_owned()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            ),
            ..ObjectMeta::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| ((*k).to_owned(), ByteString(v.as_bytes().to_vec())))
                .collect::<BTreeMap<_, _>>(),
        ),
        ..Secret::default()
    }
}

#[test]
fn cluster_api_secret_is_named_by_its_cluster_label_and_read_from_value() {
    let options = SecretOptions::cluster_api("fleet");
    let s = secret(
        "prod-kubeconfig",
        &[(CLUSTER_NAME_LABEL, "prod-eu")],
        &[("value", "apiVersion: v1")],
    );
    let (name, bytes) = options.cluster_of(&s).unwrap();
    assert_eq!(name, "prod-eu");
    assert_eq!(bytes, b"apiVersion: v1");
}

#[test]
fn unlabelled_secret_is_named_after_itself_without_the_kubeconfig_suffix() {
    let options = SecretOptions::default().namespace("fleet");
    let s = secret("edge-7-kubeconfig", &[], &[("kubeconfig", "k")]);
    assert_eq!(options.cluster_of(&s).unwrap().0, "edge-7");
    let plain = secret("edge-8", &[], &[("kubeconfig", "k")]);
    assert_eq!(options.cluster_of(&plain).unwrap().0, "edge-8");
}

#[test]
fn without_a_namespace_the_cluster_name_carries_the_secrets_namespace() {
    let options = SecretOptions::default();
    let s = secret("a-kubeconfig", &[], &[("kubeconfig", "k")]);
    assert_eq!(options.cluster_of(&s).unwrap().0, "fleet/a");
}

#[test]
fn default_keys_fall_back_from_kubeconfig_to_value() {
    let options = SecretOptions::default().namespace("fleet");
    let both = secret("a", &[], &[("kubeconfig", "first"), ("value", "second")]);
    assert_eq!(options.cluster_of(&both).unwrap().1, b"first");
    let capi = secret("b", &[], &[("value", "second")]);
    assert_eq!(options.cluster_of(&capi).unwrap().1, b"second");
}

#[test]
fn a_secret_without_the_key_is_refused_with_its_name_and_the_keys_tried() {
    let options = SecretOptions::cluster_api("fleet");
    let s = secret("c-kubeconfig", &[], &[("kubeconfig", "k")]);
    assert_eq!(
        options.cluster_of(&s).unwrap_err(),
        "Secret c-kubeconfig has no data key value"
    );
}

#[test]
fn pass_engages_new_re_engages_changed_and_disengages_gone_clusters() {
    let yaml = |server: &str| {
        format!(
            "apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: '{server}'}}}}]\nusers: [{{name: u, user: {{}}}}]\ncontexts: [{{name: x, context: {{cluster: c, user: u}}}}]\ncurrent-context: x\n"
        )
    };
    let provider = KubeconfigSecrets::new(
        kubegen_client::Client::new(kubegen_client::Config::new(
            "http://127.0.0.1:1".parse().unwrap(),
        ))
        .unwrap(),
        SecretOptions::cluster_api("fleet"),
    );
    let (sender, mut inbox) = tokio::sync::mpsc::unbounded_channel();
    let sink = ClusterSink(sender);
    let mut seen = BTreeMap::new();
    let one = |name: &str, server: &str| {
        Arc::new(secret(
            &format!("{name}-kubeconfig"),
            &[(CLUSTER_NAME_LABEL, name)],
            &[("value", &yaml(server))],
        ))
    };
    let mut events = || {
        let mut out = Vec::new();
        while let Ok(event) = inbox.try_recv() {
            out.push(match event {
                ClusterEvent::Engage { name, .. } => format!("engage {name}"),
                ClusterEvent::Disengage { name } => format!("disengage {name}"),
            });
        }
        out
    };
    provider.pass(
        &[one("a", "http://a:1"), one("b", "http://b:1")],
        &sink,
        &mut seen,
    );
    assert_eq!(events(), ["engage a", "engage b"]);
    provider.pass(
        &[one("a", "http://a:1"), one("b", "http://b:1")],
        &sink,
        &mut seen,
    );
    assert!(events().is_empty(), "unchanged Secrets report nothing");
    provider.pass(&[one("a", "http://a:2")], &sink, &mut seen);
    assert_eq!(events(), ["engage a", "disengage b"]);
}
