use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use http::{Request, Response};
use kubegen_testserver::TestServer;

use super::*;
use crate::body::Body;
use crate::discovery::tests::client_of;
use crate::transport::Transport;

/// Counts the requests that reach the test server.
struct Counting {
    inner: Client,
    requests: AtomicUsize,
}

impl Transport for Counting {
    fn send(
        &self,
        request: Request<bytes::Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Body>>> + Send + '_>> {
        self.requests.fetch_add(1, Ordering::SeqCst);
        Box::pin(self.inner.send(request))
    }
}

/// A server that is down: every request fails to connect.
struct Down;

impl Transport for Down {
    fn send(
        &self,
        request: Request<bytes::Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Body>>> + Send + '_>> {
        let url = request.uri().to_string();
        Box::pin(async move {
            Err(crate::Error::Connect {
                url,
                message: "connection refused".into(),
            })
        })
    }
}

async fn counting(server: &TestServer) -> (Client, Arc<Counting>) {
    let counting = Arc::new(Counting {
        inner: client_of(server),
        requests: AtomicUsize::new(0),
    });
    (
        Client::with_transport(counting.clone(), "default"),
        counting,
    )
}

#[tokio::test]
async fn memory_holds_discovery_until_invalidated() {
    let server = TestServer::start().await;
    let (client, counter) = counting(&server).await;
    let cached = CachedDiscovery::new(client, CacheOptions::default());
    assert!(!cached.fresh().await);
    let first = cached.resources().await.unwrap();
    let asked = counter.requests.load(Ordering::SeqCst);
    assert_eq!(asked, 2, "aggregated discovery is /api and /apis");
    assert!(cached.fresh().await);
    let again = cached.resources().await.unwrap();
    assert!(Arc::ptr_eq(&first, &again));
    assert_eq!(counter.requests.load(Ordering::SeqCst), 2);
    cached.invalidate().await;
    assert!(!cached.fresh().await);
    cached.resources().await.unwrap();
    assert_eq!(counter.requests.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn the_disk_cache_is_read_back_in_kubectls_layout_while_unexpired() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let options = CacheOptions::default().dir(dir.path());
    let written = CachedDiscovery::new(client_of(&server), options.clone())
        .resources()
        .await
        .unwrap();
    for file in [
        "servergroups.json",
        "v1/serverresources.json",
        "apps/v1/serverresources.json",
    ] {
        assert!(dir.path().join(file).is_file(), "{file}");
    }
    let groups: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("servergroups.json")).unwrap())
            .unwrap();
    assert_eq!(groups["groups"][0]["name"], "");

    // A process that starts while the server is down still finds its kinds, not fresh.
    let offline = CachedDiscovery::new(
        Client::with_transport(Arc::new(Down), "default"),
        options.clone(),
    );
    let read = offline.resources().await.unwrap();
    assert_eq!(read.groups, written.groups);
    assert_eq!(read.resources, written.resources);
    assert!(!offline.fresh().await);

    // Invalidated, it goes to the server even though the files are fresh.
    offline.invalidate().await;
    let error = offline.resources().await.unwrap_err();
    assert!(error.is_connect(), "{error}");

    // Expired files count as absent.
    let expired = CachedDiscovery::new(
        Client::with_transport(Arc::new(Down), "default"),
        options.ttl(Duration::ZERO),
    );
    assert!(expired.resources().await.unwrap_err().is_connect());
}

#[tokio::test]
async fn a_corrupt_cache_file_is_ignored_and_rewritten() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let options = CacheOptions::default().dir(dir.path());
    CachedDiscovery::new(client_of(&server), options.clone())
        .resources()
        .await
        .unwrap();
    let file = dir.path().join("apps/v1/serverresources.json");
    std::fs::write(&file, b"{\"resources\": [ not json").unwrap();
    let (client, counter) = counting(&server).await;
    let cached = CachedDiscovery::new(client, options);
    let read = cached.resources().await.unwrap();
    assert!(
        read.resources["apps/v1"]
            .resources
            .iter()
            .any(|r| r.name == "deployments")
    );
    assert_eq!(counter.requests.load(Ordering::SeqCst), 2);
    assert!(cached.fresh().await);
    let rewritten: ApiResourceList =
        serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(rewritten.group_version, "apps/v1");
}

#[test]
fn the_default_directory_is_kubectls() {
    let discovery = match std::env::var_os("KUBECACHEDIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("discovery"),
        None => match home::home_dir() {
            Some(home) => home.join(".kube/cache/discovery"),
            None => {
                println!("skipped: no home directory and no KUBECACHEDIR");
                return;
            }
        },
    };
    assert_eq!(
        default_cache_dir("https://127.0.0.1:6443"),
        Some(discovery.join("127.0.0.1_6443"))
    );
    assert_eq!(
        default_cache_dir("https://example.com/k8s/clusters/c-1"),
        Some(discovery.join("example.com/k8s/clusters/c_1"))
    );
}
