//! What an API server answers when an admission webhook denies, times out, cannot be reached or
//! cannot judge, under each `failurePolicy`: one scenario run against kubegen-testserver
//! (always) and against a real cluster (`KUBEGEN_E2E_KUBECONFIG`, the `_on_cluster` variant), so
//! the test server's answers are checked to be the real servers'. The webhook is kubegen's own
//! [`WebhookServer`] on 127.0.0.1 with a self-signed certificate, reached by `clientConfig.url`.
//!
//! The configurations are written in the newest admissionregistration version the server
//! serves: `v1`, or `v1beta1` on servers before 1.16, whose defaults differ (`failurePolicy:
//! Ignore`, `matchPolicy: Exact`, `timeoutSeconds: 30`, `sideEffects: Unknown`).
//!
//! The wording of a failed call changed between the two servers measured: v1.36 (and the test
//! server) say `failed calling webhook "<name>": failed to call webhook: Post ...`, 1.15 says
//! `failed calling webhook "<name>": Post ...`. Codes and reasons are the same on both.
//!
//! A real API server reads configurations through an informer, so a change takes a moment to be
//! seen: every step polls with dry-run creates (the webhooks declare `sideEffects: None`) until
//! the server answers as expected or a deadline passes, then makes the real request. Answers
//! under `Ignore` are only trusted after the same configuration was seen failing under `Fail`.
//!
//! Each run works in a namespace of its own (its configurations select it by label) and deletes
//! the configurations and the namespace afterwards, whatever happened.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use k8s_openapi::api::core::v1::ConfigMap;
use kubegen_client::Client;
use kubegen_runtime::ProcessMetrics;
use kubegen_runtime::webhook::{
    Admission, Denial, Mutator, SelfSigned, Validator, Warnings, WebhookOptions, WebhookServer,
};
use kubegen_testserver::TestServer;
use serde_json::{Value, json};

/// The label a run's namespace carries, its value the run's id: the configurations select it.
const SCOPE_LABEL: &str = "kubegen.example.com/webhook-answers";

/// How long a server may take to see a configuration change.
const PROPAGATION: Duration = Duration::from_secs(30);

/// How a webhook call failure is worded.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Wording {
    /// v1.36 and the test server: `failed calling webhook "<n>": failed to call webhook: <why>`.
    Current,
    /// 1.15: `failed calling webhook "<n>": <why>`.
    Before116,
}

/// The server under test and what it speaks.
struct Target {
    client: Client,
    /// `v1` or `v1beta1`.
    admission_version: &'static str,
    wording: Wording,
    namespace: String,
    id: String,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_answers_match_the_real_servers() {
    let server = TestServer::start().await;
    answers(server.client()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real cluster: scripts/test.sh runs it when KUBEGEN_E2E_KUBECONFIG is set"]
async fn webhook_answers_match_the_real_servers_on_cluster() {
    answers(kubegen_e2e_support::cluster_client().await).await;
}

/// The whole table, in order.
async fn answers(client: Client) {
    let target = Target::new(client).await;
    let cleanup = Cleanup {
        client: target.client.clone(),
        paths: vec![format!("/api/v1/namespaces/{}", target.namespace)],
        dir: std::env::temp_dir().join(format!("kubegen-webhook-answers-{}", target.id)),
    };
    let hooks = Hooks::start(&target.client, &cleanup.dir).await;
    let mut cleanup = cleanup;
    target.create_namespace().await;

    denial_carries_the_webhooks_code_reason_and_message(&target, &hooks, &mut cleanup).await;
    timeouts_fail_then_are_ignored(&target, &hooks, &mut cleanup).await;
    unreachable_webhooks_fail_then_are_ignored(&target, &hooks, &mut cleanup).await;
    a_webhook_that_cannot_judge_fails_the_call(&target, &hooks, &mut cleanup).await;
    a_mutation_is_stored(&target, &hooks, &mut cleanup).await;
    defaults_depend_on_the_configuration_version(&target, &mut cleanup).await;
}

async fn denial_carries_the_webhooks_code_reason_and_message(
    target: &Target,
    hooks: &Hooks,
    cleanup: &mut Cleanup,
) {
    let path = target
        .install(
            "deny",
            "Validating",
            &hooks.url("/deny"),
            &hooks.ca,
            "Fail",
            5,
        )
        .await;
    cleanup.paths.insert(0, path.clone());
    let want = (
        422,
        "Invalid".to_owned(),
        "admission webhook \"deny.example.com\" denied the request: custom message from the webhook"
            .to_owned(),
    );
    assert_eq!(target.answer_when("a-deny", &want).await, want, "denial");
    target.delete(&path).await;
}

async fn timeouts_fail_then_are_ignored(target: &Target, hooks: &Hooks, cleanup: &mut Cleanup) {
    let url = hooks.url("/sleep");
    let path = target
        .install("sleep", "Validating", &url, &hooks.ca, "Fail", 1)
        .await;
    cleanup.paths.insert(0, path.clone());
    let why = format!("Post \"{url}?timeout=1s\": context deadline exceeded");
    let want = target.failed_call("sleep", &why);
    assert_eq!(target.answer_when("a-sleepfail", &want).await, want);
    target.set_failure_policy(&path, "Ignore").await;
    let calls = hooks.sleeps.load(Ordering::SeqCst);
    assert_eq!(
        target.answer_when("a-sleepignore", &created()).await,
        created()
    );
    assert!(
        hooks.sleeps.load(Ordering::SeqCst) > calls,
        "under Ignore the webhook is still called (and its timeout ignored)"
    );
    target.delete(&path).await;
}

async fn unreachable_webhooks_fail_then_are_ignored(
    target: &Target,
    hooks: &Hooks,
    cleanup: &mut Cleanup,
) {
    let port = closed_port();
    let url = format!("https://127.0.0.1:{port}/x");
    let path = target
        .install("down", "Validating", &url, &hooks.ca, "Fail", 5)
        .await;
    cleanup.paths.insert(0, path.clone());
    let why = format!(
        "Post \"{url}?timeout=5s\": dial tcp 127.0.0.1:{port}: connect: connection refused"
    );
    let want = target.failed_call("down", &why);
    assert_eq!(target.answer_when("a-downfail", &want).await, want);
    target.set_failure_policy(&path, "Ignore").await;
    assert_eq!(
        target.answer_when("a-downignore", &created()).await,
        created()
    );
    target.delete(&path).await;
}

/// [`Denial::unavailable`]: the call answers HTTP 503, so `failurePolicy` decides.
async fn a_webhook_that_cannot_judge_fails_the_call(
    target: &Target,
    hooks: &Hooks,
    cleanup: &mut Cleanup,
) {
    let path = target
        .install(
            "unavailable",
            "Validating",
            &hooks.url("/unavailable"),
            &hooks.ca,
            "Fail",
            5,
        )
        .await;
    cleanup.paths.insert(0, path.clone());
    // The API server's REST client words a 503 without a Status body this way; the
    // handler's message is not shown.
    let why = "the server is currently unable to handle the request";
    let want = target.failed_call("unavailable", why);
    assert_eq!(target.answer_when("a-unavailable", &want).await, want);
    target.delete(&path).await;
}

async fn a_mutation_is_stored(target: &Target, hooks: &Hooks, cleanup: &mut Cleanup) {
    let path = target
        .install(
            "mutate",
            "Mutating",
            &hooks.url("/mutate"),
            &hooks.ca,
            "Fail",
            5,
        )
        .await;
    cleanup.paths.insert(0, path.clone());
    let deadline = tokio::time::Instant::now() + PROPAGATION;
    loop {
        let (code, body) = target.create("a-mutate", true).await;
        assert_eq!(code, 201, "{body}");
        if body["metadata"]["labels"]["mutated"] == "yes" {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the mutating webhook was never called"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (code, body) = target.create("a-mutate", false).await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(
        body["metadata"]["labels"],
        json!({"app": "x", "mutated": "yes"})
    );
    target.delete(&path).await;
}

/// A configuration that sets only a name and a URL: the server fills in its version's defaults.
async fn defaults_depend_on_the_configuration_version(target: &Target, cleanup: &mut Cleanup) {
    let name = format!("kubegen-answers-defaults-{}", target.id);
    let path = target.config_path("Validating", &name);
    let body = json!({
        "apiVersion": format!("admissionregistration.k8s.io/{}", target.admission_version),
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [{
            "name": "defaults.example.com",
            "clientConfig": {"url": "https://127.0.0.1:1/x"},
            "sideEffects": "None",
            "admissionReviewVersions": ["v1", "v1beta1"],
            "namespaceSelector": {"matchLabels": {SCOPE_LABEL: target.id}},
        }],
    });
    let (code, stored) = target.send("POST", &collection(&path), Some(&body)).await;
    assert_eq!(code, 201, "{stored}");
    cleanup.paths.insert(0, path.clone());
    let webhook = &stored["webhooks"][0];
    let defaults = (
        &webhook["failurePolicy"],
        &webhook["matchPolicy"],
        &webhook["timeoutSeconds"],
    );
    match target.admission_version {
        "v1" => assert_eq!(defaults, (&json!("Fail"), &json!("Equivalent"), &json!(10))),
        _ => assert_eq!(defaults, (&json!("Ignore"), &json!("Exact"), &json!(30))),
    }
    target.delete(&path).await;
}

impl Target {
    async fn new(client: Client) -> Target {
        let (_, group) = send(&client, "GET", "/apis/admissionregistration.k8s.io", None).await;
        let served = group["versions"].as_array().cloned().unwrap_or_default();
        let admission_version = if served.iter().any(|v| v["version"] == "v1") {
            "v1"
        } else {
            "v1beta1"
        };
        let (_, version) = send(&client, "GET", "/version", None).await;
        let minor: u32 = version["minor"]
            .as_str()
            .unwrap_or_default()
            .trim_end_matches('+')
            .parse()
            .unwrap_or(u32::MAX);
        let wording = if minor < 16 {
            Wording::Before116
        } else {
            Wording::Current
        };
        let id = format!(
            "{}-{}",
            std::process::id(),
            jiff::Timestamp::now().as_millisecond() % 1_000_000
        );
        Target {
            client,
            admission_version,
            wording,
            namespace: format!("kubegen-webhook-answers-{id}"),
            id,
        }
    }

    async fn create_namespace(&self) {
        let body = json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": self.namespace, "labels": {SCOPE_LABEL: self.id}}});
        let (code, answer) = self.send("POST", "/api/v1/namespaces", Some(&body)).await;
        assert_eq!(code, 201, "{answer}");
    }

    /// The 500 of a call that failed for `why` under `failurePolicy: Fail`.
    fn failed_call(&self, webhook: &str, why: &str) -> (u16, String, String) {
        let call = match self.wording {
            Wording::Current => format!("failed to call webhook: {why}"),
            Wording::Before116 => why.to_owned(),
        };
        (
            500,
            "InternalError".to_owned(),
            format!(
                "Internal error occurred: failed calling webhook \"{webhook}.example.com\": {call}"
            ),
        )
    }

    fn config_path(&self, kind: &str, name: &str) -> String {
        format!(
            "/apis/admissionregistration.k8s.io/{}/{}webhookconfigurations/{name}",
            self.admission_version,
            kind.to_lowercase()
        )
    }

    /// Installs a one-webhook configuration `<name>.example.com` for ConfigMap creates in the
    /// run's namespace; returns its path.
    async fn install(
        &self,
        name: &str,
        kind: &str,
        url: &str,
        ca: &str,
        failure_policy: &str,
        timeout: u32,
    ) -> String {
        let object_name = format!("kubegen-answers-{name}-{}", self.id);
        let body = json!({
            "apiVersion": format!("admissionregistration.k8s.io/{}", self.admission_version),
            "kind": format!("{kind}WebhookConfiguration"),
            "metadata": {"name": object_name},
            "webhooks": [{
                "name": format!("{name}.example.com"),
                "admissionReviewVersions": ["v1", "v1beta1"],
                "sideEffects": "None",
                "failurePolicy": failure_policy,
                "timeoutSeconds": timeout,
                "namespaceSelector": {"matchLabels": {SCOPE_LABEL: self.id}},
                "rules": [{"apiGroups": [""], "apiVersions": ["v1"],
                    "resources": ["configmaps"], "operations": ["CREATE"]}],
                "clientConfig": {"url": url, "caBundle": base64(ca)},
            }],
        });
        let path = self.config_path(kind, &object_name);
        let (code, answer) = self.send("POST", &collection(&path), Some(&body)).await;
        assert_eq!(code, 201, "installing {object_name}: {answer}");
        path
    }

    async fn set_failure_policy(&self, path: &str, policy: &str) {
        let (code, mut config) = self.send("GET", path, None).await;
        assert_eq!(code, 200, "{config}");
        config["webhooks"][0]["failurePolicy"] = json!(policy);
        let (code, answer) = self.send("PUT", path, Some(&config)).await;
        assert_eq!(code, 200, "{answer}");
    }

    async fn delete(&self, path: &str) {
        let (code, answer) = self.send("DELETE", path, None).await;
        assert!(code == 200 || code == 404, "DELETE {path}: {answer}");
    }

    /// Polls dry-run creates of ConfigMap `name` until the answer is `want`, then creates it
    /// for real: the real request's answer.
    async fn answer_when(&self, name: &str, want: &(u16, String, String)) -> (u16, String, String) {
        let deadline = tokio::time::Instant::now() + PROPAGATION;
        loop {
            let (code, body) = self.create(name, true).await;
            let answer = summary(code, &body);
            if &answer == want {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the server never answered {want:?} for {name}; last answer {answer:?}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let (code, body) = self.create(name, false).await;
        summary(code, &body)
    }

    /// POSTs ConfigMap `name` (labelled `app: x`) into the run's namespace.
    async fn create(&self, name: &str, dry_run: bool) -> (u16, Value) {
        let query = if dry_run { "?dryRun=All" } else { "" };
        let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"app": "x"}}});
        let path = format!("/api/v1/namespaces/{}/configmaps{query}", self.namespace);
        self.send("POST", &path, Some(&body)).await
    }

    async fn send(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        send(&self.client, method, path, body).await
    }
}

/// A 201 Created, as [`summary`] shows it.
fn created() -> (u16, String, String) {
    (201, String::new(), String::new())
}

/// The code, and for a refusal its Status's reason and message; checks that a 500's
/// `details.causes[0].message` is the message without `Internal error occurred: `, as both real
/// servers answer.
fn summary(code: u16, body: &Value) -> (u16, String, String) {
    if code < 300 {
        return (code, String::new(), String::new());
    }
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let message = text(&body["message"]);
    if code == 500 {
        let cause = text(&body["details"]["causes"][0]["message"]);
        assert_eq!(
            Some(cause.as_str()),
            message.strip_prefix("Internal error occurred: "),
            "{body}"
        );
    }
    (code, text(&body["reason"]), message)
}

fn collection(path: &str) -> String {
    path.rsplit_once('/')
        .map(|(collection, _)| collection.to_owned())
        .unwrap_or_default()
}

async fn send(client: &Client, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let bytes = body.map(|b| Bytes::from(b.to_string())).unwrap_or_default();
    let request = http::Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(bytes)
        .unwrap_or_else(|e| panic!("{e}"));
    match client.send(request).await {
        Ok(response) => {
            let code = response.status().as_u16();
            let bytes = response
                .into_body()
                .collect_limited(16 << 20)
                .await
                .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
            (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
        }
        Err(error) => {
            let code = error.code().unwrap_or_default();
            let status = serde_json::to_value(error.status().cloned().unwrap_or_default())
                .unwrap_or(Value::Null);
            (code, status)
        }
    }
}

fn base64(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// A port nothing listens on now.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    listener
        .local_addr()
        .unwrap_or_else(|e| panic!("{e}"))
        .port()
}

/// kubegen's webhook server with the handlers the table calls.
struct Hooks {
    addr: SocketAddr,
    ca: String,
    /// Calls to `/sleep` so far.
    sleeps: Arc<AtomicUsize>,
    _serving: tokio::task::JoinHandle<()>,
}

impl Hooks {
    async fn start(client: &Client, dir: &std::path::Path) -> Hooks {
        let bootstrap = SelfSigned {
            ip_addresses: vec![[127, 0, 0, 1].into()],
            ..SelfSigned::default()
        };
        let ca = bootstrap.files(dir).unwrap_or_else(|e| panic!("{e}"));
        let sleeps = Arc::new(AtomicUsize::new(0));
        let mut server = WebhookServer::new(&ProcessMetrics::default());
        server
            .add_validator::<ConfigMap>("/deny", Deny)
            .add_validator::<ConfigMap>("/sleep", Sleep(sleeps.clone()))
            .add_validator::<ConfigMap>("/unavailable", Unavailable)
            .add_mutator::<ConfigMap>("/mutate", Label);
        let options = WebhookOptions::default()
            .bind_address(SocketAddr::from(([127, 0, 0, 1], 0)))
            .cert_dir(dir);
        let (serving, addr) = server
            .start(client, &options)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        Hooks {
            addr,
            ca,
            sleeps,
            _serving: serving,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.addr)
    }
}

struct Deny;

impl Validator<ConfigMap> for Deny {
    async fn validate(&self, _: &Admission<'_, ConfigMap>) -> Result<Warnings, Denial> {
        Err(Denial::with_code(422, "custom message from the webhook").reason("Invalid"))
    }
}

/// Answers after 8 s, far past the configurations' timeouts.
struct Sleep(Arc<AtomicUsize>);

impl Validator<ConfigMap> for Sleep {
    async fn validate(&self, _: &Admission<'_, ConfigMap>) -> Result<Warnings, Denial> {
        self.0.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_secs(8)).await;
        Ok(Warnings::new())
    }
}

struct Unavailable;

impl Validator<ConfigMap> for Unavailable {
    async fn validate(&self, _: &Admission<'_, ConfigMap>) -> Result<Warnings, Denial> {
        Err(Denial::unavailable("caches not synced"))
    }
}

/// Adds the label `mutated: yes`.
struct Label;

impl Mutator<ConfigMap> for Label {
    async fn mutate(
        &self,
        object: &mut ConfigMap,
        _: &Admission<'_, ConfigMap>,
    ) -> Result<Warnings, Denial> {
        object
            .metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert("mutated".to_owned(), "yes".to_owned());
        Ok(Warnings::new())
    }
}

/// Deletes the run's configurations (newest first) and namespace and its certificate directory
/// when dropped, also while a failed assertion unwinds.
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
                    send(&client, "DELETE", &path, None).await;
                }
            });
        });
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
