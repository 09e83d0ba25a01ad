//! Every rule in deploy/rbac.yaml is needed: with the whole file the controller works without a
//! single 403, and with any one verb of any rule of its ClusterRole or Role taken away (in a copy
//! of the file) it runs into a Forbidden that shows in its metrics: the informers'
//! `informer_list_watch_errors_total{code="403"}` or the client's
//! `rest_client_requests_total{code="403"}` (the controller also logs the Forbidden message).
//! Runs on the test server, whose RBAC copies a real server's (the same scenario passes on v1.36
//! and v1.15 with the whole file, see `e2e.rs`).
//!
//! Eight verbs are not reliably exercised by the scenario, listed in [`NOT_EXERCISED`] with the
//! reason; the test asserts that every other verb is noticed when taken away, so a rule that
//! turns out unneeded shows up here.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize as _;
use serde_yaml::Value;

use crate::harness::{
    Controller, Env, allowed_deployment, deploy_dir, forbidden_deployment, is_ready, unique,
    whitelist,
};

/// Verbs deploy/rbac.yaml grants that the scenario may not need, and why they are there.
/// Checked on v1.36 too: a copy of rbac.yaml without all three, bound to another
/// ServiceAccount, ran the scenario with no 403 at all.
const NOT_EXERCISED: &[(&str, &str)] = &[
    (
        "ClusterRole image-police: list on - whitelists",
        "the informers stream their initial list (a watch) where the server serves it, as the test server and v1.36 do; servers without streaming lists (1.15 to 1.26, or the WatchList gate off) get paged lists",
    ),
    (
        "ClusterRole image-police: list on - deployments",
        "as for whitelists: needed where the server does not stream lists",
    ),
    (
        "Role image-police-leader-election: list on - leases",
        "the shard ring's Lease informer streams its initial list like the others: needed where the server does not stream lists",
    ),
    (
        "ClusterRole image-police: get on - whitelists",
        "used only to retry a status write that conflicted, which the scenario provokes only sometimes",
    ),
    (
        "ClusterRole image-police: get on - deployments",
        "unused by the current controller (informers list and watch; deletes go by name)",
    ),
    (
        "ClusterRole image-police: patch on - events",
        "used by the Event recorder to count a repeated Event (client-go's correlator); the scenario repeats none",
    ),
    (
        "ClusterRole image-police: get on - validatingwebhookconfigurations",
        "used only by --webhook-self-signed (caBundle injection); the scenario runs the controller without webhooks",
    ),
    (
        "ClusterRole image-police: update on - validatingwebhookconfigurations",
        "used only by --webhook-self-signed (caBundle injection); the scenario runs the controller without webhooks",
    ),
];

/// How long a controller missing a permission gets to run into it.
const NOTICE: Duration = Duration::from_secs(20);
/// How long a controller that deleted the forbidden Deployment gets to finish its reconcile
/// (status write, Events) before its metrics are read.
const SETTLE: Duration = Duration::from_secs(3);

fn rbac_documents() -> Vec<Value> {
    let path = deploy_dir().join("rbac.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    serde_yaml::Deserializer::from_str(&text)
        .map(|doc| Value::deserialize(doc).unwrap())
        .filter(|doc| !doc.is_null())
        .collect()
}

/// One verb of one rule: (document index, rule index, verb) and how to name it.
struct Permission {
    document: usize,
    rule: usize,
    verb: String,
    described: String,
}

/// Every verb of every rule of every Role and ClusterRole in deploy/rbac.yaml.
fn permissions() -> Vec<Permission> {
    let mut out = Vec::new();
    for (document, doc) in rbac_documents().iter().enumerate() {
        let kind = doc["kind"].as_str().unwrap_or_default();
        if kind != "Role" && kind != "ClusterRole" {
            continue;
        }
        for (rule, body) in doc["rules"].as_sequence().into_iter().flatten().enumerate() {
            let resources = serde_yaml::to_string(&body["resources"]).unwrap();
            for verb in body["verbs"].as_sequence().into_iter().flatten() {
                let verb = verb.as_str().unwrap().to_owned();
                let described = format!(
                    "{kind} {}: {verb} on {}",
                    doc["metadata"]["name"].as_str().unwrap_or_default(),
                    resources.trim().replace('\n', " ")
                );
                out.push(Permission {
                    document,
                    rule,
                    verb,
                    described,
                });
            }
        }
    }
    out
}

/// A copy of deploy/rbac.yaml without `permission` (and without its rule once no verb is left).
fn rbac_without(permission: &Permission) -> PathBuf {
    let mut documents = rbac_documents();
    let rules = documents[permission.document]["rules"]
        .as_sequence_mut()
        .unwrap();
    let verbs = rules[permission.rule]["verbs"].as_sequence_mut().unwrap();
    verbs.retain(|v| v.as_str() != Some(permission.verb.as_str()));
    if verbs.is_empty() {
        rules.remove(permission.rule);
    }
    let text: Vec<String> = documents
        .iter()
        .map(|d| serde_yaml::to_string(d).unwrap())
        .collect();
    let path = std::env::temp_dir().join(format!("image-police-rbac-{}.yaml", unique()));
    std::fs::write(&path, text.join("---\n")).unwrap();
    path
}

/// The scenario every permission is checked with: a WhiteList, an allowed and a forbidden
/// Deployment, and a controller sharded as deploy/deployment.yaml runs it (one replica: its
/// shard Lease, the ring's Leases, the shard label). Returns the controller and the namespace.
async fn run_scenario(env: &Env) -> (Controller, String) {
    let ns = env.namespace("rbac").await;
    env.create(whitelist(&ns)).await;
    env.create(allowed_deployment(&ns, "web")).await;
    env.create(forbidden_deployment(&ns, "cache")).await;
    (env.spawn_sharded_controller("rbac", &ns).await, ns)
}

/// The 403s the controller's metrics show: (family, labels) of every non-zero sample.
fn forbidden_samples(controller: &Controller) -> Vec<String> {
    let text = controller.process.encode();
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).unwrap();
    scrape
        .samples
        .iter()
        .filter(|s| {
            matches!(
                s.metric.as_str(),
                "rest_client_requests_total" | "informer_list_watch_errors_total"
            )
        })
        .filter(|s| s.labels.get("code") == Some("403"))
        .filter(|s| matches!(s.value, prometheus_parse::Value::Untyped(n) | prometheus_parse::Value::Counter(n) if n > 0.0))
        .map(|s| format!("{}{{{}}}", s.metric, s.labels))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_whole_rbac_yaml_the_controller_works_without_a_403() {
    let env = Env::testserver().await;
    let (controller, ns) = run_scenario(&env).await;
    env.wait_deployment_gone(&ns, "cache").await;
    env.wait_events(&ns, "DeletedForbiddenImage", 1).await;
    env.wait_status(&ns, crate::harness::WHITELIST, is_ready)
        .await;
    assert!(env.deployment_exists(&ns, "web").await);
    assert_eq!(forbidden_samples(&controller), Vec::<String>::new());
    assert_eq!(controller.stop().await, Ok(()));
}

/// The 403s the controller missing `permission` shows (none: unnoticed) by the time it has
/// deleted the forbidden Deployment and had [`SETTLE`] more to write status and Events, or
/// within [`NOTICE`] if it never gets that far.
async fn noticed_without(permission: &Permission) -> Vec<String> {
    let rbac = rbac_without(permission);
    let env = Env::testserver_with_rbac(&rbac).await;
    let _ = std::fs::remove_file(&rbac);
    let (controller, ns) = run_scenario(&env).await;
    let deadline = tokio::time::Instant::now() + NOTICE;
    let mut seen = forbidden_samples(&controller);
    while seen.is_empty() && tokio::time::Instant::now() < deadline {
        if !env.deployment_exists(&ns, "cache").await {
            tokio::time::sleep(SETTLE).await;
            seen = forbidden_samples(&controller);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        seen = forbidden_samples(&controller);
    }
    controller.kill();
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_any_one_permission_of_rbac_yaml_the_controller_runs_into_a_403() {
    let mut unnoticed = Vec::new();
    for permission in permissions() {
        let seen = noticed_without(&permission).await;
        eprintln!("without {}: {seen:?}", permission.described);
        if seen.is_empty() {
            unnoticed.push(permission.described);
        }
    }
    let optional: Vec<&str> = NOT_EXERCISED.iter().map(|(what, _)| *what).collect();
    unnoticed.retain(|what| !optional.contains(&what.as_str()));
    assert_eq!(
        unnoticed,
        Vec::<String>::new(),
        "permissions the scenario did not need"
    );
}

#[test]
fn the_copy_without_a_permission_lacks_exactly_that_verb() {
    let all = permissions();
    let status = all
        .iter()
        .find(|p| p.described.contains("whitelists/status"))
        .unwrap();
    let copy = rbac_without(status);
    let text = std::fs::read_to_string(&copy).unwrap();
    let _ = std::fs::remove_file(&copy);
    assert!(!text.contains("whitelists/status"), "{text}");
    assert!(text.contains("- whitelists\n"), "{text}");
    assert_eq!(Path::new(&copy).extension().unwrap(), "yaml");
}
