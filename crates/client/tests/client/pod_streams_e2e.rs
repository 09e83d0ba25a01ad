//! Pod logs, exec, attach and port-forward against a real cluster, on the paths that need no kubelet: what the
//! API server answers before any container is reached. `#[ignore]`d like `apply_e2e.rs`:
//! `scripts/test.sh` runs them when `KUBEGEN_E2E_KUBECONFIG` names a kubeconfig. With
//! `KUBEGEN_E2E_UNPRIVILEGED_KUBECONFIG` (a user that may not exec) the 403 is checked too.
//!
//! The pods are never scheduled (the test clusters have no scheduler or kubelet, and `bound`
//! names a Node that does not exist), so the answers are the same on any cluster: v1.15 and
//! v1.36 were both checked.

use k8s_openapi::api::core::v1::{Namespace, Pod};
use kubegen_client::{
    Client, Config, CreateOptions, DeleteOptions, Error, ExecOptions, LoadOptions, LogOptions,
    ResourceClient,
};
use serde_json::json;

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[tokio::test]
#[ignore = "needs a real cluster: scripts/test.sh runs it when KUBEGEN_E2E_KUBECONFIG is set"]
async fn log_exec_attach_and_port_forward_errors_before_a_kubelet_on_cluster() -> TestResult {
    let path = std::env::var_os("KUBEGEN_E2E_KUBECONFIG")
        .ok_or("set KUBEGEN_E2E_KUBECONFIG to a kubeconfig to run this against a real cluster")?;
    let client = client_from(std::path::Path::new(&path)).await?;
    let namespaces = ResourceClient::<Namespace>::cluster(client.clone());
    let ns = format!("podstream-e2e-{}", std::process::id());
    let mut namespace = Namespace::default();
    namespace.metadata.name = Some(ns.clone());
    namespaces
        .create(&namespace, &CreateOptions::default())
        .await?;
    let outcome = steps(&client, &ns).await;
    // `bound` names a node: without a kubelet to confirm, only a zero grace period deletes it,
    // and the namespace waits for its pods.
    let now = DeleteOptions::default().grace_period_seconds(0);
    for pod in ["one", "two", "bound"] {
        let deleted = ResourceClient::<Pod>::namespaced(client.clone(), &ns)
            .delete(pod, &now)
            .await;
        if let Err(err) = deleted
            && !err.is_not_found()
        {
            return Err(err.into());
        }
    }
    namespaces.delete(&ns, &DeleteOptions::default()).await?;
    outcome
}

async fn client_from(path: &std::path::Path) -> Result<Client, Box<dyn std::error::Error>> {
    let config = Config::load(&LoadOptions::default().kubeconfig_path(path)).await?;
    Ok(Client::new(config)?)
}

fn pod(name: &str, containers: &[&str], node: Option<&str>) -> Result<Pod, serde_json::Error> {
    let containers: Vec<_> = containers
        .iter()
        .map(|c| json!({"name": c, "image": "busybox"}))
        .collect();
    // No scheduler may take these pods (a node simulator running against the same cluster would
    // otherwise bind them and change the answers).
    let mut spec = json!({
        "containers": containers,
        "schedulerName": "podstream-e2e-none",
        "nodeSelector": {"kubernetes.io/hostname": "podstream-e2e-none"},
    });
    if let Some(node) = node {
        spec["nodeName"] = json!(node);
    }
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec}))
}

/// The message of an API error, or a failure naming what came instead.
fn message(result: Result<impl std::fmt::Debug, Error>) -> Result<(u16, String), String> {
    match result {
        Err(err) => match err.status() {
            Some(status) => Ok((status.code, status.message.clone())),
            None => Err(format!("not an API error: {err}")),
        },
        Ok(value) => Err(format!("expected an error, got {value:?}")),
    }
}

async fn steps(client: &Client, ns: &str) -> TestResult {
    let pods = ResourceClient::<Pod>::namespaced(client.clone(), ns);
    let create = CreateOptions::default();
    pods.create(&pod("one", &["main"], None)?, &create).await?;
    pods.create(&pod("two", &["a", "b"], None)?, &create)
        .await?;
    pods.create(&pod("bound", &["main"], Some("ghost-node"))?, &create)
        .await?;
    logs(client, ns).await?;
    exec(client, ns).await?;
    port_forward(client, ns).await?;
    if let Some(path) = std::env::var_os("KUBEGEN_E2E_UNPRIVILEGED_KUBECONFIG") {
        let other = client_from(std::path::Path::new(&path)).await?;
        let err = other
            .exec(ns, "one", &["true"], &ExecOptions::default())
            .await
            .err()
            .ok_or("an unprivileged user could exec")?;
        assert!(err.is_forbidden(), "{err}");
        let err = other.port_forward(ns, "one", 80).await.err();
        assert!(err.as_ref().is_some_and(Error::is_forbidden), "{err:?}");
    } else {
        println!("SKIPPED: the 403 check (set KUBEGEN_E2E_UNPRIVILEGED_KUBECONFIG to run it)");
    }
    Ok(())
}

async fn logs(client: &Client, ns: &str) -> TestResult {
    let default = LogOptions::default();
    // Not scheduled: 204 No Content, an empty log.
    assert_eq!(client.pod_logs(ns, "one", &default).await?, b"");
    let follow = LogOptions {
        follow: true,
        ..LogOptions::default()
    };
    let mut stream = client.pod_log_stream(ns, "one", &follow).await?;
    assert!(stream.next_line().await.is_none());
    let (code, text) = message(client.pod_logs(ns, "two", &default).await)?;
    assert_eq!(
        (code, text.as_str()),
        (
            400,
            "a container name must be specified for pod two, choose one of: [a b]"
        )
    );
    let nope = LogOptions {
        container: Some("nope".to_owned()),
        ..LogOptions::default()
    };
    let (code, text) = message(client.pod_logs(ns, "one", &nope).await)?;
    assert_eq!(
        (code, text.as_str()),
        (400, "container nope is not valid for pod one")
    );
    let (code, text) = message(client.pod_logs(ns, "missing", &default).await)?;
    assert_eq!((code, text.as_str()), (404, r#"pods "missing" not found"#));
    let (code, text) = message(client.pod_logs(ns, "bound", &default).await)?;
    assert_eq!(
        (code, text.as_str()),
        (404, r#"pods "ghost-node" not found"#)
    );
    let negative = LogOptions {
        tail_lines: Some(-1),
        ..LogOptions::default()
    };
    let err = client.pod_logs(ns, "one", &negative).await.err();
    assert!(err.as_ref().is_some_and(Error::is_invalid), "{err:?}");
    Ok(())
}

async fn exec(client: &Client, ns: &str) -> TestResult {
    let opts = ExecOptions::default();
    let (code, text) = message(client.exec(ns, "one", &["true"], &opts).await)?;
    assert_eq!(
        (code, text.as_str()),
        (400, "pod one does not have a host assigned")
    );
    let (code, text) = message(client.attach(ns, "one", &opts).await)?;
    assert_eq!(
        (code, text.as_str()),
        (400, "pod one does not have a host assigned")
    );
    let (code, text) = message(client.exec(ns, "two", &["true"], &opts).await)?;
    assert_eq!(
        (code, text.as_str()),
        (
            400,
            "a container name must be specified for pod two, choose one of: [a b]"
        )
    );
    let (code, text) = message(client.exec(ns, "missing", &["true"], &opts).await)?;
    assert_eq!((code, text.as_str()), (404, r#"pods "missing" not found"#));
    let (code, text) = message(client.exec(ns, "bound", &["true"], &opts).await)?;
    assert_eq!(
        (code, text.as_str()),
        (404, r#"pods "ghost-node" not found"#)
    );
    Ok(())
}

async fn port_forward(client: &Client, ns: &str) -> TestResult {
    let (code, text) = message(client.port_forward(ns, "one", 80).await)?;
    assert_eq!(
        (code, text.as_str()),
        (400, "pod one does not have a host assigned")
    );
    let (code, text) = message(client.port_forward(ns, "missing", 80).await)?;
    assert_eq!((code, text.as_str()), (404, r#"pods "missing" not found"#));
    let (code, text) = message(client.port_forward(ns, "bound", 80).await)?;
    assert_eq!(
        (code, text.as_str()),
        (404, r#"pods "ghost-node" not found"#)
    );
    Ok(())
}
