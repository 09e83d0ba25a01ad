//! Tests of the kubeconfig rewrite (the TokenRequest itself runs in the e2e suites).

use super::*;

#[test]
fn the_current_context_switches_to_the_token_user_and_namespace() {
    let admin = "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters: [{name: k, cluster: {server: 'https://x'}}]\n\
                 contexts: [{name: c, context: {cluster: k, user: admin}}, {name: d, context: {cluster: k, user: admin}}]\n\
                 users: [{name: admin, user: {token: root}}]\n";
    let rewritten =
        kubeconfig_with_token(admin, "sa-token", "image-police").unwrap_or_else(|e| panic!("{e}"));
    let config: Value = serde_yaml::from_str(&rewritten).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        config["contexts"][0]["context"],
        json!({"cluster": "k", "user": "c-service-account", "namespace": "image-police"})
    );
    assert_eq!(config["contexts"][1]["context"]["user"], "admin");
    assert_eq!(
        config["users"][1],
        json!({"name": "c-service-account", "user": {"token": "sa-token"}})
    );
    assert_eq!(config["clusters"][0]["cluster"]["server"], "https://x");
}

#[test]
fn a_kubeconfig_without_its_current_context_is_an_error() {
    let broken = "current-context: missing\ncontexts: []\nusers: []\n";
    let result = kubeconfig_with_token(broken, "t", "ns");
    assert_eq!(
        result.map_err(|e| e.to_string()),
        Err("kubeconfig: the current context is not listed".to_owned())
    );
}
