//! The client against kubegen-testserver over real HTTP(S): config loading from its kubeconfig,
//! every verb, paging, watch, error mapping, 429 retries and the in-process `Transport` seam.

use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kubegen_client::{
    Body, Client, Config, CreateOptions, DeleteOptions, GetOptions, ListOptions, LoadOptions,
    Patch, PatchOptions, ResourceClient, Transport, UpdateOptions, WatchEvent,
};
use kubegen_testserver::{ApiServer, Failure, RequestMatch, ServerOptions, TestServer};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Loads the client the way a program does: from the server's kubeconfig file.
pub(crate) async fn client_for(server: &TestServer) -> Result<Client, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("kubeconfig");
    server.write_kubeconfig(&path)?;
    let config = Config::load(&LoadOptions::default().kubeconfig_path(&path)).await?;
    Ok(Client::new(config)?)
}

fn configmap(name: &str, value: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm.data = Some([("k".to_owned(), value.to_owned())].into());
    cm
}

fn value(cm: &ConfigMap) -> Option<&str> {
    cm.data
        .as_ref()
        .and_then(|d| d.get("k"))
        .map(String::as_str)
}

#[tokio::test]
async fn crud_round_trip_with_conflicts_and_not_found() -> TestResult {
    let server = TestServer::start().await;
    let client = client_for(&server).await?;
    assert_eq!(client.default_namespace(), "default");
    let api = ResourceClient::<ConfigMap>::namespaced(client, "default");

    let created = api
        .create(&configmap("a", "1"), &CreateOptions::default())
        .await?;
    assert!(created.metadata.uid.is_some());
    let err = api
        .create(&configmap("a", "1"), &CreateOptions::default())
        .await
        .expect_err("duplicate");
    assert!(err.is_already_exists(), "{err:?}");

    let mut changed = created.clone();
    changed.data = configmap("a", "2").data;
    let updated = api.update(&changed, &UpdateOptions::default()).await?;
    assert_eq!(value(&updated), Some("2"));
    let err = api
        .update(&changed, &UpdateOptions::default())
        .await
        .expect_err("stale resourceVersion");
    assert!(err.is_conflict(), "{err:?}");

    let patch = Patch::Merge(serde_json::json!({"data": {"k": "3"}}));
    assert_eq!(
        value(&api.patch("a", &patch, &PatchOptions::default()).await?),
        Some("3")
    );
    let json_patch =
        Patch::Json(serde_json::json!([{"op": "replace", "path": "/data/k", "value": "4"}]));
    assert_eq!(
        value(
            &api.patch("a", &json_patch, &PatchOptions::default())
                .await?
        ),
        Some("4")
    );
    assert_eq!(
        value(&api.get("a", &GetOptions::default()).await?),
        Some("4")
    );

    api.delete("a", &DeleteOptions::default()).await?;
    let err = api
        .get("a", &GetOptions::default())
        .await
        .expect_err("deleted");
    assert!(err.is_not_found(), "{err:?}");
    assert_eq!(err.status().map(|s| s.code), Some(404));
    Ok(())
}

#[tokio::test]
async fn list_pages_with_limit_and_continue() -> TestResult {
    let server = TestServer::start().await;
    let api = ResourceClient::<ConfigMap>::namespaced(client_for(&server).await?, "default");
    for i in 0..5 {
        api.create(
            &configmap(&format!("cm-{i}"), "x"),
            &CreateOptions::default(),
        )
        .await?;
    }
    let mut names = Vec::new();
    let mut opts = ListOptions::default().limit(2);
    loop {
        let page = api.list(&opts).await?;
        assert!(page.items.len() <= 2);
        names.extend(page.items.iter().filter_map(|c| c.metadata.name.clone()));
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => opts = opts.continue_token(token),
            None => break,
        }
    }
    assert_eq!(names, ["cm-0", "cm-1", "cm-2", "cm-3", "cm-4"]);
    api.delete_collection(&DeleteOptions::default(), &ListOptions::default())
        .await?;
    assert!(api.list(&ListOptions::default()).await?.items.is_empty());
    Ok(())
}

#[tokio::test]
async fn watch_from_a_list_resource_version_sees_later_changes() -> TestResult {
    let server = TestServer::start().await;
    let client = client_for(&server).await?;
    let api = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    api.create(&configmap("before", "x"), &CreateOptions::default())
        .await?;
    let rv = api
        .list(&ListOptions::default())
        .await?
        .metadata
        .resource_version
        .unwrap_or_default();
    let everywhere = ResourceClient::<ConfigMap>::all_namespaces(client);
    let mut stream = everywhere
        .watch(
            &ListOptions::default()
                .resource_version(rv)
                .timeout_seconds(500)
                .allow_watch_bookmarks(true),
        )
        .await?;
    api.create(&configmap("after", "x"), &CreateOptions::default())
        .await?;
    api.delete("after", &DeleteOptions::default()).await?;
    let mut seen = Vec::new();
    while seen.len() < 2 {
        match stream.next().await.ok_or("stream ended early")?? {
            WatchEvent::Added(cm) => {
                seen.push(format!("added {}", cm.metadata.name.unwrap_or_default()))
            }
            WatchEvent::Deleted(cm) => {
                seen.push(format!("deleted {}", cm.metadata.name.unwrap_or_default()))
            }
            WatchEvent::Bookmark(_) => {}
            other => return Err(format!("unexpected {other:?}").into()),
        }
    }
    assert_eq!(seen, ["added after", "deleted after"]);
    Ok(())
}

#[tokio::test]
async fn watch_from_compacted_history_reports_gone() -> TestResult {
    let server = TestServer::start().await;
    let api = ResourceClient::<ConfigMap>::namespaced(client_for(&server).await?, "default");
    api.create(&configmap("a", "x"), &CreateOptions::default())
        .await?;
    api.create(&configmap("b", "x"), &CreateOptions::default())
        .await?;
    server.faults().expire_history();
    let gone = match api
        .watch(&ListOptions::default().resource_version("1"))
        .await
    {
        Err(err) => err.is_gone(),
        Ok(mut stream) => {
            matches!(stream.next().await, Some(Ok(WatchEvent::Error(s))) if s.code == 410)
        }
    };
    assert!(
        gone,
        "a watch from a compacted resourceVersion must report 410"
    );
    Ok(())
}

#[tokio::test]
async fn status_subresource_updates_only_status() -> TestResult {
    // No deployment controller: it would write the status meanwhile (a 409 on the update).
    let mut options = ServerOptions::default();
    options.controller_manager = false;
    let server = TestServer::start_with(options).await;
    let api = ResourceClient::<Deployment>::namespaced(client_for(&server).await?, "default");
    let deployment: Deployment = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
    }))?;
    let created = api.create(&deployment, &CreateOptions::default()).await?;
    let patch = Patch::Merge(serde_json::json!({"status": {"replicas": 3}}));
    let patched = api
        .patch_status("web", &patch, &PatchOptions::default())
        .await?;
    assert_eq!(patched.status.and_then(|s| s.replicas), Some(3));
    let mut with_status = api.get("web", &GetOptions::default()).await?;
    with_status.status.get_or_insert_default().ready_replicas = Some(2);
    let updated = api
        .update_status(&with_status, &UpdateOptions::default())
        .await?;
    assert_eq!(updated.status.and_then(|s| s.ready_replicas), Some(2));
    assert_eq!(
        updated.metadata.generation, created.metadata.generation,
        "status writes keep generation"
    );
    Ok(())
}

#[tokio::test]
async fn get_is_retried_after_429_from_the_server() -> TestResult {
    let server = TestServer::start().await;
    let api = ResourceClient::<ConfigMap>::namespaced(client_for(&server).await?, "default");
    api.create(&configmap("a", "x"), &CreateOptions::default())
        .await?;
    server.faults().fail_next(
        1,
        RequestMatch::any().verb("get"),
        Failure::TooManyRequests {
            retry_after_seconds: 1,
        },
    );
    assert_eq!(
        value(&api.get("a", &GetOptions::default()).await?),
        Some("x")
    );
    Ok(())
}

#[tokio::test]
async fn tls_server_with_bearer_token_works_from_its_kubeconfig() -> TestResult {
    let mut opts = ServerOptions::default();
    opts.tls = true;
    opts.bearer_token = Some("secret-token".into());
    let server = TestServer::start_with(opts).await;
    let api = ResourceClient::<ConfigMap>::namespaced(client_for(&server).await?, "default");
    api.create(&configmap("a", "x"), &CreateOptions::default())
        .await?;
    assert_eq!(api.list(&ListOptions::default()).await?.items.len(), 1);

    let unauthenticated = Client::new(
        Config::new(server.url().parse()?).root_ca_pem(server.ca_pem().unwrap_or_default()),
    )?;
    let err = ResourceClient::<ConfigMap>::namespaced(unauthenticated, "default")
        .get("a", &GetOptions::default())
        .await
        .expect_err("no token");
    assert!(err.is_unauthorized(), "{err:?}");
    Ok(())
}

/// The in-process seam: `ApiServer::handle` as a `Transport` (how the fake clientset works).
struct InProcess(ApiServer);

impl Transport for InProcess {
    fn send(
        &self,
        request: http::Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = kubegen_client::Result<http::Response<Body>>> + Send + '_>>
    {
        Box::pin(async move { Ok(self.0.handle(request).await.map(Body::new)) })
    }
}

#[tokio::test]
async fn in_process_transport_runs_the_same_verbs() -> TestResult {
    let server = ApiServer::new(ServerOptions::default());
    let client = Client::with_transport(Arc::new(InProcess(server)), "default");
    let api = ResourceClient::<ConfigMap>::namespaced(client, "default");
    api.create(&configmap("a", "x"), &CreateOptions::default())
        .await?;
    let rv = api
        .list(&ListOptions::default())
        .await?
        .metadata
        .resource_version
        .unwrap_or_default();
    let mut stream = api
        .watch(&ListOptions::default().resource_version(rv))
        .await?;
    api.create(&configmap("b", "y"), &CreateOptions::default())
        .await?;
    assert!(
        matches!(stream.next().await, Some(Ok(WatchEvent::Added(cm))) if cm.metadata.name.as_deref() == Some("b"))
    );
    Ok(())
}

#[tokio::test]
async fn exec_plugin_token_authenticates_requests() -> TestResult {
    let mut opts = ServerOptions::default();
    opts.bearer_token = Some("from-plugin".into());
    let server = TestServer::start_with(opts).await;
    let dir = tempfile::tempdir()?;
    std::fs::write(
        dir.path().join("plugin.sh"),
        r#"printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-plugin"}}'"#,
    )?;
    let kubeconfig = format!(
        "current-context: t\n\
         contexts: [{{name: t, context: {{cluster: c, user: u}}}}]\n\
         clusters: [{{name: c, cluster: {{server: '{}'}}}}]\n\
         users: [{{name: u, user: {{exec: {{apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: ['{}']}}}}}}]\n",
        server.url(),
        dir.path().join("plugin.sh").display()
    );
    let path = dir.path().join("config");
    std::fs::write(&path, kubeconfig)?;
    let config = Config::load(&LoadOptions::default().kubeconfig_path(&path)).await?;
    let api = ResourceClient::<ConfigMap>::namespaced(Client::new(config)?, "default");
    api.create(&configmap("a", "x"), &CreateOptions::default())
        .await?;
    assert_eq!(api.list(&ListOptions::default()).await?.items.len(), 1);
    Ok(())
}
