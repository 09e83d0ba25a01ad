//! Server-side apply through [`ResourceClient::apply`], end to end: against kubegen-testserver
//! (always) and against a real cluster when `KUBEGEN_E2E_KUBECONFIG` names a kubeconfig (the
//! `_on_cluster` variant is `#[ignore]`d, so without a cluster nextest counts it as skipped, never
//! as passed; `scripts/test.sh` runs it when the variable is set).
//!
//! A server without server-side apply (Kubernetes 1.15 answers 415) cannot run the scenario: the
//! test then checks that the client says so in a readable error, and prints that the apply steps
//! were skipped and why.

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kubegen_client::{
    ApplyOptions, Client, Config, CreateOptions, DeleteOptions, LoadOptions, ResourceClient,
};
use kubegen_testserver::TestServer;
use serde_json::{Value, json};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[tokio::test]
async fn two_managers_apply_with_conflict_force_and_removal_on_testserver() -> TestResult {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("kubeconfig");
    server.write_kubeconfig(&path)?;
    scenario(client_from(&path).await?).await
}

#[tokio::test]
#[ignore = "needs a real cluster: scripts/test.sh runs it when KUBEGEN_E2E_KUBECONFIG is set"]
async fn two_managers_apply_with_conflict_force_and_removal_on_cluster() -> TestResult {
    let path = std::env::var_os("KUBEGEN_E2E_KUBECONFIG")
        .ok_or("set KUBEGEN_E2E_KUBECONFIG to a kubeconfig to run this against a real cluster")?;
    scenario(client_from(std::path::Path::new(&path)).await?).await
}

async fn client_from(path: &std::path::Path) -> Result<Client, Box<dyn std::error::Error>> {
    let config = Config::load(&LoadOptions::default().kubeconfig_path(path)).await?;
    Ok(Client::new(config)?)
}

fn config(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": data})
}

/// Runs the steps in a namespace of their own, deleted afterwards whatever happened.
async fn scenario(client: Client) -> TestResult {
    let namespaces = ResourceClient::<Namespace>::cluster(client.clone());
    let name = format!("ssa-e2e-{}", std::process::id());
    let mut ns = Namespace::default();
    ns.metadata.name = Some(name.clone());
    namespaces.create(&ns, &CreateOptions::default()).await?;
    let outcome = steps(ResourceClient::namespaced(client, &name)).await;
    namespaces.delete(&name, &DeleteOptions::default()).await?;
    outcome
}

async fn steps(api: ResourceClient<ConfigMap>) -> TestResult {
    let a = ApplyOptions::new("kubegen-e2e-a");
    let b = ApplyOptions::new("kubegen-e2e-b");
    // Apply-create.
    let first = api
        .apply(
            "applied",
            &config(json!({"a": "1", "b": "2", "d": "4"})),
            &a,
        )
        .await;
    let created = match first {
        Err(err) if err.is_apply_unsupported() => {
            let message = err.to_string();
            assert!(
                message.contains("the server does not support server-side apply"),
                "{message}"
            );
            println!("SKIPPED: the server-side apply steps (the server has none): {message}");
            return Ok(());
        }
        other => other?,
    };
    assert_eq!(data(&created), json!({"a": "1", "b": "2", "d": "4"}));
    // A second manager shares `b` (same value) and adds `c`.
    let shared = api
        .apply("applied", &config(json!({"b": "2", "c": "3"})), &b)
        .await?;
    assert_eq!(
        data(&shared),
        json!({"a": "1", "b": "2", "c": "3", "d": "4"})
    );
    // Changing `a`, which the first manager owns, conflicts.
    let clash = config(json!({"a": "x", "b": "2", "c": "3"}));
    let err = api
        .apply("applied", &clash, &b)
        .await
        .err()
        .ok_or("no conflict")?;
    assert!(err.is_conflict(), "{err}");
    let status = err.status().ok_or("conflict without a Status")?;
    assert_eq!(
        status.message,
        "Apply failed with 1 conflict: conflict with \"kubegen-e2e-a\": .data.a"
    );
    let causes = &status.details.as_ref().ok_or("no details")?.causes;
    assert_eq!(causes.len(), 1);
    assert_eq!(
        (causes[0].reason.as_str(), causes[0].field.as_str()),
        ("FieldManagerConflict", ".data.a")
    );
    // Force takes `a` over.
    let forced = api.apply("applied", &clash, &b.clone().force(true)).await?;
    assert_eq!(
        data(&forced),
        json!({"a": "x", "b": "2", "c": "3", "d": "4"})
    );
    // The first manager stops applying `a` (now the second's: stays) and `d` (nobody else's:
    // removed).
    let removed = api.apply("applied", &config(json!({"b": "2"})), &a).await?;
    assert_eq!(data(&removed), json!({"a": "x", "b": "2", "c": "3"}));
    let owners = owners(&removed);
    assert_eq!(
        owners,
        [
            (
                "kubegen-e2e-a".to_string(),
                "Apply".to_string(),
                json!({"f:data": {"f:b": {}}})
            ),
            (
                "kubegen-e2e-b".to_string(),
                "Apply".to_string(),
                json!({"f:data": {"f:a": {}, "f:b": {}, "f:c": {}}})
            ),
        ]
    );
    Ok(())
}

fn data(cm: &ConfigMap) -> Value {
    json!(cm.data)
}

/// Managers, operations and fields of `cm`, sorted by manager.
fn owners(cm: &ConfigMap) -> Vec<(String, String, Value)> {
    let mut out: Vec<(String, String, Value)> = cm
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|e| {
            let fields = e.fields_v1.as_ref().map_or(Value::Null, |f| f.0.clone());
            (
                e.manager.clone().unwrap_or_default(),
                e.operation.clone().unwrap_or_default(),
                fields,
            )
        })
        .collect();
    out.sort_by(|x, y| x.0.cmp(&y.0));
    out
}
