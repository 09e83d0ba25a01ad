//! image-police's admission webhook called by a real API server: image-police serves it on
//! 127.0.0.1 with the self-signed bootstrap (as `--webhook-self-signed` does in a pod), the
//! configuration is deploy/webhook.yaml (deploy/webhook-v1beta1.yaml before 1.16) pointed at it
//! by `url`, and a forbidden Deployment must be refused with the message the API server relays.
//!
//! Run against kubegen-testserver, which calls admission webhooks as v1.36 does, and against a
//! real cluster (the `_on_cluster` variant). The configuration is cluster-wide, so it is narrowed to the scenario's namespace (a label only it
//! carries), keeps the manifest's `failurePolicy: Ignore`, and is deleted first on the way out,
//! by a guard that also runs when an assertion fails.

use std::path::PathBuf;

use bytes::Bytes;
use kubegen_client::Client;
use kubegen_controller::run::SERVICE_ACCOUNT;
use kubegen_runtime::manifests;
use serde_json::{Value, json};

use crate::harness::{Env, WHITELIST, deploy_dir, forbidden_deployment, unique, whitelist};

/// The label that selects the scenario's namespace for its configuration.
const SCOPE_LABEL: &str = "image-police.example.com/e2e-webhook";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn image_police_webhook_denies_a_forbidden_image() {
    webhook_denies_a_forbidden_image(Env::testserver().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real cluster: scripts/test.sh runs it when KUBEGEN_E2E_KUBECONFIG is set"]
async fn image_police_webhook_denies_a_forbidden_image_on_cluster() {
    webhook_denies_a_forbidden_image(Env::cluster().await).await;
}

async fn webhook_denies_a_forbidden_image(env: Env) {
    let id = unique();
    let ns = format!("e2e-webhook-{id}");
    let name = format!("image-police-e2e-{id}");
    let version = admission_version(env.client()).await;
    let port = free_port();
    let cert_dir = std::env::temp_dir().join(format!("image-police-e2e-certs-{id}"));
    let cleanup = Cleanup {
        client: env.client().clone(),
        paths: vec![
            format!(
                "/apis/admissionregistration.k8s.io/{version}/validatingwebhookconfigurations/{name}"
            ),
            format!("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{name}"),
            format!("/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}"),
            format!("/api/v1/namespaces/{ns}"),
        ],
        dir: cert_dir.clone(),
    };
    env.create(json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": ns, "labels": {SCOPE_LABEL: id}},
    }))
    .await;
    env.create(whitelist(&ns)).await;
    // deploy/rbac.yaml lets image-police update the one configuration named image-police;
    // the scenario's has its own name, so the same grant is made for it.
    for object in grant(&name) {
        env.create(object).await;
    }
    env.create(configuration(version, &name, port, &id)).await;

    let controller = env.start_webhook(&ns, port, &cert_dir, &name).await;
    wait_until_called(env.client(), &ns).await;
    let forbidden =
        post_deployment(env.client(), &ns, forbidden_deployment(&ns, "cache"), false).await;
    let message = format!(
        "admission webhook \"deployments.image-police.police.example.com\" denied the request: \
         image-police: Deployment runs images not allowed in namespace \"{ns}\" by WhiteLists \
         [\"{WHITELIST}\"]: image \"redis:7.4\" of container \"main\" (ImageNotListed: image is \
         not on the WhiteList)"
    );
    assert_eq!(
        forbidden,
        (403, Some("ForbiddenImage".to_owned()), message),
        "the forbidden Deployment"
    );
    let allowed = post_deployment(
        env.client(),
        &ns,
        crate::harness::allowed_deployment(&ns, "web"),
        false,
    )
    .await;
    assert_eq!(allowed.0, 201, "the allowed Deployment: {allowed:?}");
    assert!(!env.deployment_exists(&ns, "cache").await);

    drop(cleanup); // the configuration first, while the webhook still answers
    assert_eq!(controller.stop().await, Ok(()));
}

/// `v1` when the server serves admissionregistration.k8s.io/v1 (1.16+), else `v1beta1`.
async fn admission_version(client: &Client) -> &'static str {
    let request = http::Request::get("/apis/admissionregistration.k8s.io")
        .body(Bytes::new())
        .unwrap_or_else(|e| panic!("{e}"));
    let group: Value = client
        .request_json(request)
        .await
        .unwrap_or_else(|e| panic!("discovery: {e}"));
    let versions = group["versions"].as_array().cloned().unwrap_or_default();
    if versions.iter().any(|v| v["version"] == "v1") {
        "v1"
    } else {
        "v1beta1"
    }
}

/// deploy/webhook.yaml's (or deploy/webhook-v1beta1.yaml's) configuration, named `name`,
/// calling 127.0.0.1:`port` by url, for the namespace labelled `id` only.
fn configuration(version: &str, name: &str, port: u16, id: &str) -> Value {
    let file = match version {
        "v1" => "webhook.yaml",
        _ => "webhook-v1beta1.yaml",
    };
    let path = deploy_dir().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut config = manifests::documents(&path, &text)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .find(|doc| doc["kind"] == "ValidatingWebhookConfiguration")
        .unwrap_or_else(|| panic!("{file} has no ValidatingWebhookConfiguration"));
    assert_eq!(
        config["apiVersion"],
        format!("admissionregistration.k8s.io/{version}")
    );
    config["metadata"] = json!({"name": name});
    let webhooks = config["webhooks"]
        .as_array_mut()
        .unwrap_or_else(|| panic!("{file}: no webhooks"));
    assert_eq!(webhooks.len(), 7, "{file}: one webhook per kind");
    for webhook in webhooks {
        let path = webhook["clientConfig"]["service"]["path"].clone();
        let path = path
            .as_str()
            .unwrap_or_else(|| panic!("{file}: a webhook without a path"));
        webhook["clientConfig"] = json!({"url": format!("https://127.0.0.1:{port}{path}")});
        let selector = webhook["namespaceSelector"]["matchExpressions"]
            .as_array_mut()
            .unwrap_or_else(|| panic!("{file}: no namespaceSelector"));
        selector.push(json!({"key": SCOPE_LABEL, "operator": "In", "values": [id]}));
    }
    config
}

/// A ClusterRole and its binding letting image-police's ServiceAccount get and update the
/// configuration `name`: deploy/rbac.yaml's rule for another name.
fn grant(name: &str) -> [Value; 2] {
    let (namespace, account) = SERVICE_ACCOUNT;
    [
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": name},
            "rules": [{
                "apiGroups": ["admissionregistration.k8s.io"],
                "resources": ["validatingwebhookconfigurations"],
                "resourceNames": [name],
                "verbs": ["get", "update"],
            }],
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
        }),
    ]
}

/// Waits until the API server calls the webhook with the injected CA: it caches configurations,
/// so the update may take a moment to be seen, and until then the call fails and
/// `failurePolicy: Ignore` admits. Probes with dry runs (`sideEffects: None` allows them), so
/// nothing is created meanwhile.
async fn wait_until_called(client: &Client, namespace: &str) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let probe = forbidden_deployment(namespace, "probe");
        let (code, ..) = post_deployment(client, namespace, probe, true).await;
        if code == 403 {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the API server never called the webhook (last dry run answered {code})"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// POSTs `deployment` into `namespace` (as a dry run when `dry_run`): the HTTP code, and for a
/// refusal the Status's reason and message.
async fn post_deployment(
    client: &Client,
    namespace: &str,
    deployment: Value,
    dry_run: bool,
) -> (u16, Option<String>, String) {
    let query = if dry_run { "?dryRun=All" } else { "" };
    let request = http::Request::post(format!(
        "/apis/apps/v1/namespaces/{namespace}/deployments{query}"
    ))
    .header(http::header::CONTENT_TYPE, "application/json")
    .body(Bytes::from(deployment.to_string()))
    .unwrap_or_else(|e| panic!("{e}"));
    match client.send(request).await {
        Ok(response) => (response.status().as_u16(), None, String::new()),
        Err(error) => {
            let status = error.status().cloned().unwrap_or_default();
            (
                error.code().unwrap_or_default(),
                Some(status.reason),
                status.message,
            )
        }
    }
}

/// A port free on loopback now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    listener
        .local_addr()
        .unwrap_or_else(|e| panic!("{e}"))
        .port()
}

/// Deletes the scenario's cluster-wide objects (the configuration first) and its certificate
/// directory when dropped, also while a failed assertion unwinds.
struct Cleanup {
    client: Client,
    paths: Vec<String>,
    dir: PathBuf,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let (client, paths) = (self.client.clone(), std::mem::take(&mut self.paths));
        tokio::task::block_in_place(|| {
            tokio::runtime::Handle::current().block_on(async move {
                for path in paths {
                    if let Err(error) = delete(&client, &path).await {
                        eprintln!("cleanup: DELETE {path}: {error}");
                    }
                }
            });
        });
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn delete(client: &Client, path: &str) -> Result<(), kubegen_client::Error> {
    let request = http::Request::delete(path)
        .body(Bytes::new())
        .unwrap_or_else(|e| panic!("{e}"));
    match client.send(request).await {
        Ok(_) => Ok(()),
        Err(error) if error.is_not_found() => Ok(()),
        Err(error) => Err(error),
    }
}
