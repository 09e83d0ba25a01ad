use std::collections::BTreeMap;

use super::*;
use crate::multicluster::provider::ClusterEvent;

/// The consumer's provider file: `secretreader` first, then `token-exchange`.
fn access(args_policy: &str, envs_policy: &str) -> AccessConfig {
    serde_json::from_value(json!({"providers": [
        {
            "name": "secretreader",
            "execConfig": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "command": "/bin/secretreader-plugin",
                "args": ["--mode", "token"],
                "env": [{"name": "REGION", "value": "own"}],
                "provideClusterInfo": true
            },
            "profileSourcedCLIArgsPolicy": args_policy,
            "profileSourcedEnvVarsPolicy": envs_policy
        },
        {
            "name": "token-exchange",
            "execConfig": {"apiVersion": "client.authentication.k8s.io/v1", "command": "/bin/te"}
        }
    ]}))
    .unwrap()
}

/// A profile as a cluster manager writes it: `status` in the API's JSON.
fn profile(name: &str, status: Value) -> ClusterProfile {
    serde_json::from_value(json!({
        "apiVersion": "multicluster.x-k8s.io/v1alpha1",
        "kind": "ClusterProfile",
        "metadata": {"name": name, "namespace": "fleet"},
        "spec": {"clusterManager": {"name": "test"}},
        "status": status,
    }))
    .unwrap()
}

fn healthy(providers: Value) -> Value {
    json!({
        "conditions": [{"type": "ControlPlaneHealthy", "status": "True", "reason": "Probed",
                        "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
        "accessProviders": providers,
    })
}

#[test]
fn health_is_the_control_plane_healthy_condition_being_true() {
    assert!(profile("a", healthy(json!([]))).is_healthy());
    for status in ["False", "Unknown"] {
        let p = profile(
            "a",
            json!({"conditions": [{"type": "ControlPlaneHealthy", "status": status}]}),
        );
        assert!(!p.is_healthy(), "{status}");
    }
    let other = profile(
        "a",
        json!({"conditions": [{"type": "Joined", "status": "True"}]}),
    );
    assert!(!other.is_healthy(), "another condition does not count");
    assert!(!profile("a", Value::Null).is_healthy(), "no status");
}

#[test]
fn the_first_provider_of_the_consumers_file_that_the_profile_lists_wins() {
    let p = profile(
        "a",
        healthy(json!([
            {"name": "token-exchange", "cluster": {"server": "https://te:443"}},
            {"name": "secretreader", "cluster": {"server": "https://sr:443"}},
        ])),
    );
    let kubeconfig = access("", "").kubeconfig(&p).unwrap();
    assert_eq!(
        kubeconfig["clusters"][0]["cluster"]["server"],
        "https://sr:443"
    );
    assert_eq!(
        kubeconfig["users"][0]["user"]["exec"]["command"],
        "/bin/secretreader-plugin"
    );
    assert_eq!(
        kubeconfig["users"][0]["user"]["exec"]["interactiveMode"],
        "Never"
    );
}

#[test]
fn an_access_provider_overrides_a_deprecated_credential_provider_of_the_same_name() {
    let mut status = healthy(json!([
        {"name": "secretreader", "cluster": {"server": "https://new:443"}},
    ]));
    status["credentialProviders"] =
        json!([{"name": "secretreader", "cluster": {"server": "https://old:443"}}]);
    let kubeconfig = access("", "").kubeconfig(&profile("a", status)).unwrap();
    assert_eq!(
        kubeconfig["clusters"][0]["cluster"]["server"],
        "https://new:443"
    );

    let only_old = json!({
        "conditions": [{"type": "ControlPlaneHealthy", "status": "True"}],
        "credentialProviders": [{"name": "secretreader", "cluster": {"server": "https://old:443"}}],
    });
    let kubeconfig = access("", "").kubeconfig(&profile("b", only_old)).unwrap();
    assert_eq!(
        kubeconfig["clusters"][0]["cluster"]["server"],
        "https://old:443"
    );
}

#[test]
fn a_profile_without_a_known_provider_is_refused_naming_the_known_ones() {
    let p = profile(
        "a",
        healthy(json!([{"name": "oidc", "cluster": {"server": "https://x:1"}}])),
    );
    assert_eq!(
        access("", "").kubeconfig(&p).unwrap_err(),
        "no access provider of the profile is one of secretreader, token-exchange"
    );
}

/// A profile whose secretreader cluster carries KEP-5339's extensions.
fn with_extensions() -> ClusterProfile {
    profile(
        "a",
        healthy(json!([{"name": "secretreader", "cluster": {
            "server": "https://sr:443",
            "extensions": [
                {"name": ADDITIONAL_ARGS, "extension": ["--cluster", "a"]},
                {"name": ADDITIONAL_ENVS, "extension": {"REGION": "profile", "ZONE": "z1"}},
                {"name": "client.authentication.k8s.io/exec", "extension": {"clusterName": "a"}},
            ],
        }}])),
    )
}

#[test]
fn profile_sourced_arguments_are_added_only_under_the_append_policy() {
    let p = with_extensions();
    let ignored = access("Ignore", "").kubeconfig(&p).unwrap();
    assert_eq!(
        ignored["users"][0]["user"]["exec"]["args"],
        json!(["--mode", "token"])
    );
    let appended = access("Append", "").kubeconfig(&p).unwrap();
    assert_eq!(
        appended["users"][0]["user"]["exec"]["args"],
        json!(["--mode", "token", "--cluster", "a"])
    );
    assert_eq!(
        access("Prepend", "").kubeconfig(&p).unwrap_err(),
        "provider secretreader: unsupported profileSourcedCLIArgsPolicy \"Prepend\""
    );
}

#[test]
fn profile_sourced_variables_merge_by_policy() {
    let p = with_extensions();
    let env = |policy: &str| {
        access("", policy).kubeconfig(&p).unwrap()["users"][0]["user"]["exec"]["env"].clone()
    };
    assert_eq!(env(""), json!([{"name": "REGION", "value": "own"}]));
    assert_eq!(
        env("AppendIfNotExists"),
        json!([{"name": "REGION", "value": "own"}, {"name": "ZONE", "value": "z1"}])
    );
    assert_eq!(
        env("Replace"),
        json!([{"name": "REGION", "value": "profile"}, {"name": "ZONE", "value": "z1"}])
    );
}

fn provider() -> ClusterProfiles {
    let hub = Client::new(kubegen_client::Config::new(
        "http://127.0.0.1:1".parse().unwrap(),
    ))
    .unwrap();
    ClusterProfiles::new(hub, ClusterProfileOptions::new(access("", "")))
}

#[test]
fn a_healthy_profile_builds_a_client_configuration_for_its_server() {
    let p = profile(
        "a",
        healthy(json!([{"name": "secretreader", "cluster": {"server": "https://sr:6443"}}])),
    );
    let (config, _) = provider().cluster_of(&p).unwrap();
    assert_eq!(config.cluster_url().to_string(), "https://sr:6443/");
    let sick = profile(
        "a",
        json!({"conditions": [{"type": "ControlPlaneHealthy", "status": "False"}],
               "accessProviders": [{"name": "secretreader", "cluster": {"server": "https://sr:6443"}}]}),
    );
    assert_eq!(
        provider().cluster_of(&sick).unwrap_err(),
        "ControlPlaneHealthy is not True"
    );
}

#[test]
fn pass_engages_healthy_re_engages_rotated_and_disengages_sick_or_gone_profiles() {
    let provider = provider();
    let (sender, mut inbox) = tokio::sync::mpsc::unbounded_channel();
    let sink = ClusterSink(sender);
    let mut seen = BTreeMap::new();
    let one = |name: &str, server: &str, health: &str| {
        Arc::new(profile(
            name,
            json!({
                "conditions": [{"type": "ControlPlaneHealthy", "status": health}],
                "accessProviders": [{"name": "secretreader", "cluster": {"server": server}}],
            }),
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
    let (a, b) = (
        one("a", "https://a:1", "True"),
        one("b", "https://b:1", "True"),
    );
    provider.pass(&[a.clone(), b.clone()], &sink, &mut seen);
    assert_eq!(events(), ["engage fleet/a", "engage fleet/b"]);
    provider.pass(&[a.clone(), b.clone()], &sink, &mut seen);
    assert!(events().is_empty(), "unchanged profiles report nothing");
    // a's endpoint moves (rotation), b turns unhealthy.
    let (moved, sick) = (
        one("a", "https://a:2", "True"),
        one("b", "https://b:1", "False"),
    );
    provider.pass(&[moved.clone(), sick.clone()], &sink, &mut seen);
    assert_eq!(events(), ["engage fleet/a", "disengage fleet/b"]);
    // b heals; a's profile is deleted.
    provider.pass(&[b], &sink, &mut seen);
    assert_eq!(events(), ["engage fleet/b", "disengage fleet/a"]);
}

#[test]
fn the_provider_file_reads_from_json_and_names_itself_when_broken() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("providers.json");
    std::fs::write(&good, serde_json::to_string(&access("Append", "")).unwrap()).unwrap();
    let read = AccessConfig::from_file(&good).unwrap();
    assert_eq!(read.providers.len(), 2);
    assert_eq!(read.providers[0].profile_sourced_cli_args_policy, "Append");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{").unwrap();
    let error = AccessConfig::from_file(&bad).unwrap_err().to_string();
    assert!(error.contains("bad.json"), "{error}");
}
