//! Checks on deploy/: RBAC grants exactly what the controller uses, the Deployment is locked
//! down, and the samples do what their comments promise under the real policy code.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use k8s_openapi::api::apps::v1::Deployment;
use kubegen_controller::policy::{Denial, Policy, RuleInput};
use serde::Deserialize as _;
use serde_yaml::Value;

fn deploy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy")
}

fn documents(file: &str) -> Vec<Value> {
    let path = deploy_dir().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml::Deserializer::from_str(&text)
        .map(|doc| Value::deserialize(doc).unwrap_or_else(|e| panic!("{file}: {e}")))
        .filter(|doc| !doc.is_null())
        .collect()
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_sequence()
        .map(|seq| {
            seq.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// (kind, apiGroup, resource, verb) for every rule of every Role/ClusterRole.
fn grants() -> BTreeSet<(String, String, String, String)> {
    let mut out = BTreeSet::new();
    for doc in documents("rbac.yaml") {
        let kind = doc["kind"].as_str().unwrap_or_default().to_owned();
        if kind != "Role" && kind != "ClusterRole" {
            continue;
        }
        for rule in doc["rules"].as_sequence().into_iter().flatten() {
            for group in strings(&rule["apiGroups"]) {
                for resource in strings(&rule["resources"]) {
                    for verb in strings(&rule["verbs"]) {
                        out.insert((kind.clone(), group.clone(), resource.clone(), verb));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn rbac_grants_exactly_the_verbs_the_controller_uses() {
    let expected: BTreeSet<_> = [
        ("ClusterRole", "police.example.com", "whitelists", "get"),
        ("ClusterRole", "police.example.com", "whitelists", "list"),
        ("ClusterRole", "police.example.com", "whitelists", "watch"),
        // --sharding-ring: the shard label.
        ("ClusterRole", "police.example.com", "whitelists", "patch"),
        (
            "ClusterRole",
            "police.example.com",
            "whitelists/status",
            "update",
        ),
        ("ClusterRole", "apps", "deployments", "get"),
        ("ClusterRole", "apps", "deployments", "list"),
        ("ClusterRole", "apps", "deployments", "watch"),
        ("ClusterRole", "apps", "deployments", "delete"),
        ("ClusterRole", "", "events", "create"),
        ("ClusterRole", "", "events", "patch"),
        // --webhook-self-signed: the CA goes into the configuration's caBundle (GET, PUT).
        (
            "ClusterRole",
            "admissionregistration.k8s.io",
            "validatingwebhookconfigurations",
            "get",
        ),
        (
            "ClusterRole",
            "admissionregistration.k8s.io",
            "validatingwebhookconfigurations",
            "update",
        ),
        ("Role", "coordination.k8s.io", "leases", "get"),
        ("Role", "coordination.k8s.io", "leases", "list"),
        ("Role", "coordination.k8s.io", "leases", "watch"),
        ("Role", "coordination.k8s.io", "leases", "create"),
        ("Role", "coordination.k8s.io", "leases", "update"),
    ]
    .into_iter()
    .map(|(k, g, r, v)| (k.to_owned(), g.to_owned(), r.to_owned(), v.to_owned()))
    .collect();
    assert_eq!(grants(), expected);
}

#[test]
fn lease_role_is_bound_only_in_the_controller_namespace() {
    for doc in documents("rbac.yaml") {
        if matches!(doc["kind"].as_str(), Some("Role" | "RoleBinding")) {
            assert_eq!(
                doc["metadata"]["namespace"].as_str(),
                Some("image-police"),
                "{doc:?}"
            );
        }
        for subject in doc["subjects"].as_sequence().into_iter().flatten() {
            assert_eq!(subject["name"].as_str(), Some("image-police"));
            assert_eq!(subject["namespace"].as_str(), Some("image-police"));
        }
    }
}

#[test]
fn deployment_is_locked_down_and_shards() {
    let docs = documents("deployment.yaml");
    let deployment: Deployment =
        serde_yaml::from_value(docs[0].clone()).unwrap_or_else(|e| panic!("{e}"));
    let spec = deployment.spec.unwrap_or_default();
    let pod = spec.template.spec.unwrap_or_default();
    let pod_security = pod.security_context.unwrap_or_default();
    assert_eq!(pod_security.run_as_non_root, Some(true));
    assert_eq!(
        pod_security.seccomp_profile.map(|p| p.type_),
        Some("RuntimeDefault".to_owned())
    );
    assert_eq!(pod.service_account_name.as_deref(), Some("image-police"));
    let container = &pod.containers[0];
    let security = container.security_context.clone().unwrap_or_default();
    assert_eq!(security.read_only_root_filesystem, Some(true));
    assert_eq!(security.allow_privilege_escalation, Some(false));
    assert_eq!(
        security.capabilities.and_then(|c| c.drop),
        Some(vec!["ALL".to_owned()])
    );
    let resources = container.resources.clone().unwrap_or_default();
    assert!(resources.requests.is_some() && resources.limits.is_some());
    let probe_path = |probe: Option<&k8s_openapi::api::core::v1::Probe>| {
        probe
            .and_then(|p| p.http_get.as_ref())
            .and_then(|h| h.path.clone())
    };
    assert_eq!(
        probe_path(container.liveness_probe.as_ref()).as_deref(),
        Some("/healthz")
    );
    assert_eq!(
        probe_path(container.readiness_probe.as_ref()).as_deref(),
        Some("/readyz")
    );
    let args = container.args.clone().unwrap_or_default();
    assert_eq!(spec.replicas, Some(3));
    assert!(
        args.iter().any(|a| a == "--sharding-ring=image-police"),
        "replicas > 1 needs --sharding-ring (or --leader-elect)"
    );
    // The arguments are what the binary accepts, and the probes reach its endpoints.
    let flags = deployment_flags(container);
    let port = |name: &str| {
        let ports = container.ports.iter().flatten();
        ports
            .filter(|p| p.name.as_deref() == Some(name))
            .map(|p| p.container_port)
            .next()
    };
    let bound = |addr: kubegen_runtime::flags::BindAddress| addr.0.map(|a| i32::from(a.port()));
    assert_eq!(
        bound(flags.manager.health_probe_bind_address),
        port("health")
    );
    assert_eq!(bound(flags.manager.metrics_bind_address), port("metrics"));
}

#[test]
fn samples_hold_one_allowed_and_one_forbidden_deployment() {
    let whitelist = &documents("samples/10-whitelist.yaml")[0];
    let rules: Vec<(String, Vec<String>)> = whitelist["spec"]["images"]
        .as_sequence()
        .into_iter()
        .flatten()
        .map(|rule| {
            (
                rule["name"].as_str().unwrap_or_default().to_owned(),
                strings(&rule["tags"]),
            )
        })
        .collect();
    let inputs = rules.iter().map(|(name, tags)| RuleInput { name, tags });
    let policy = Policy::new(inputs, false).unwrap_or_else(|e| panic!("{e:?}"));

    let load = |file: &str| -> Deployment {
        serde_yaml::from_value(documents(file)[0].clone()).unwrap_or_else(|e| panic!("{file}: {e}"))
    };
    assert_eq!(
        policy.violations(&load("samples/20-allowed-deployment.yaml")),
        vec![]
    );
    let forbidden = policy.violations(&load("samples/30-forbidden-deployment.yaml"));
    assert_eq!(forbidden.len(), 1);
    assert_eq!(forbidden[0].denial, Denial::NotListed);
    assert_eq!(forbidden[0].image, "redis:7.4");
}

/// The Deployment's arguments, parsed by the binary's own flag parser.
fn deployment_flags(
    container: &k8s_openapi::api::core::v1::Container,
) -> kubegen_controller::flags::Flags {
    let args = container.args.clone().unwrap_or_default();
    let command_line = std::iter::once("image-police").chain(args.iter().map(String::as_str));
    <kubegen_controller::flags::Flags as clap::Parser>::try_parse_from(command_line)
        .unwrap_or_else(|e| panic!("deploy/deployment.yaml's args: {e}"))
}

#[test]
fn webhook_configurations_reach_the_served_paths_through_the_service_and_port() {
    let docs = documents("deployment.yaml");
    let deployment: Deployment =
        serde_yaml::from_value(docs[0].clone()).unwrap_or_else(|e| panic!("{e}"));
    let pod = deployment
        .spec
        .unwrap_or_default()
        .template
        .spec
        .unwrap_or_default();
    let container = &pod.containers[0];
    let flags = deployment_flags(container);
    let service = documents("webhook.yaml")
        .into_iter()
        .find(|doc| doc["kind"] == "Service")
        .unwrap_or_else(|| panic!("deploy/webhook.yaml has no Service"));
    let service_name = service["metadata"]["name"].as_str().unwrap_or_default();
    let namespace = service["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        service_name, flags.webhook_service,
        "the self-signed certificate's name"
    );
    let service_port = &service["spec"]["ports"][0];
    let target = service_port["targetPort"].as_str().unwrap_or_default();
    let container_port = container
        .ports
        .iter()
        .flatten()
        .find(|p| p.name.as_deref() == Some(target))
        .map(|p| p.container_port);
    assert_eq!(container_port, Some(i32::from(flags.manager.webhook_port)));
    let served: BTreeSet<&str> = kubegen_controller::webhook::PATHS
        .iter()
        .map(|(_, path)| *path)
        .collect();
    for file in ["webhook.yaml", "webhook-v1beta1.yaml"] {
        let config = documents(file)
            .into_iter()
            .find(|doc| doc["kind"] == "ValidatingWebhookConfiguration")
            .unwrap_or_else(|| panic!("{file}: no configuration"));
        assert_eq!(
            config["metadata"]["name"].as_str(),
            Some(flags.webhook_configuration.as_str()),
            "{file}"
        );
        let mut paths = BTreeSet::new();
        for webhook in config["webhooks"].as_sequence().into_iter().flatten() {
            let target = &webhook["clientConfig"]["service"];
            assert_eq!(target["name"].as_str(), Some(service_name), "{file}");
            assert_eq!(target["namespace"].as_str(), Some(namespace), "{file}");
            assert_eq!(target["port"], service_port["port"], "{file}");
            assert_eq!(webhook["failurePolicy"].as_str(), Some("Ignore"), "{file}");
            paths.insert(target["path"].as_str().unwrap_or_default());
        }
        assert_eq!(paths, served, "{file}");
    }
    // The certificate directory is a volume (the root filesystem is read-only).
    let mount = container
        .volume_mounts
        .iter()
        .flatten()
        .find(|m| std::path::Path::new(&m.mount_path) == flags.manager.webhook_cert_path)
        .unwrap_or_else(|| panic!("nothing mounted at --webhook-cert-path"));
    let volumes = pod.volumes.unwrap_or_default();
    assert!(volumes.iter().any(|v| v.name == mount.name), "{mount:?}");
}

#[test]
fn cert_manager_issues_for_the_service_into_the_secret_the_annotation_names() {
    let docs = documents("cert-manager.yaml");
    let certificate = docs
        .iter()
        .find(|doc| doc["kind"] == "Certificate")
        .unwrap_or_else(|| panic!("no Certificate"));
    let issuer = docs
        .iter()
        .find(|doc| doc["kind"] == "Issuer")
        .unwrap_or_else(|| panic!("no Issuer"));
    assert_eq!(
        certificate["spec"]["issuerRef"]["name"],
        issuer["metadata"]["name"]
    );
    let namespace = certificate["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(issuer["metadata"]["namespace"].as_str(), Some(namespace));
    let name = certificate["metadata"]["name"].as_str().unwrap_or_default();
    let dns_names = strings(&certificate["spec"]["dnsNames"]);
    assert!(
        dns_names.contains(&format!("image-police-webhook.{namespace}.svc")),
        "{dns_names:?}"
    );
    // The documented switch: the annotation on both configurations, the Secret in deployment.yaml.
    let read = |file: &str| {
        std::fs::read_to_string(deploy_dir().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
    };
    let annotation = format!("#   cert-manager.io/inject-ca-from: {namespace}/{name}\n");
    for file in ["webhook.yaml", "webhook-v1beta1.yaml"] {
        assert!(
            read(file).contains(&annotation),
            "{file} lacks {annotation:?}"
        );
    }
    let secret = certificate["spec"]["secretName"]
        .as_str()
        .unwrap_or_default();
    assert!(
        read("deployment.yaml").contains(&format!("#   secretName: {secret}\n")),
        "deployment.yaml does not show how to mount {secret}"
    );
}
