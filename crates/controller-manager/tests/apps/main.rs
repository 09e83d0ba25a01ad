//! The deployment and replicaset controllers against the in-process test server, and the same
//! scenarios against a real v1.36 cluster with its kube-controller-manager (`_on_cluster`,
//! ignored unless `KUBEGEN_E2E_KUBECONFIG` is set). Every expectation was captured on that
//! cluster: a scenario passes on both or the controllers differ from the real ones.

#![allow(clippy::unwrap_used)]

mod lifecycle;
mod rollout;

use std::{future::Future, time::Duration};

use k8s_openapi::api::core::v1::Event;
use kubegen_client::Client;

/// Polls `check` until it returns `Some`, for at most 20 s.
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    for _ in 0..200 {
        if let Some(v) = check().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

/// Runs `scenario` in namespace `default` of a fresh test server, whose built-in
/// controller-manager (on by default) runs these controllers.
pub async fn on_test_server<F, Fut>(scenario: F)
where
    F: FnOnce(Client, String) -> Fut,
    Fut: Future<Output = ()>,
{
    let server = kubegen_testserver::TestServer::start().await;
    scenario(server.client(), "default".into()).await;
}

/// Runs `scenario` on the cluster `KUBEGEN_E2E_KUBECONFIG` names, driven by its own
/// kube-controller-manager, in a namespace of its own that it deletes afterwards.
pub async fn on_cluster<F, Fut>(name: &str, scenario: F)
where
    F: FnOnce(Client, String) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let client = kubegen_e2e_support::cluster_client().await;
    let prefix = format!("apps-e2e-{}-", name.replace('_', "-"));
    kubegen_e2e_support::in_scratch_namespace(&client, &prefix, scenario).await;
}

/// A test on the test server and its `_on_cluster` twin for each scenario.
macro_rules! scenarios {
    ($($scenario:ident => $local:ident, $cluster:ident;)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $local() {
            $crate::on_test_server($scenario).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[ignore = "needs a real cluster with kube-controller-manager: set KUBEGEN_E2E_KUBECONFIG"]
        async fn $cluster() {
            $crate::on_cluster(stringify!($scenario), $scenario).await;
        }
    )*};
}
pub(crate) use scenarios;

/// `(type, reason, involved kind/name, message)` of the namespace's core/v1 Events, sorted,
/// with the random suffix of Pod names in messages replaced by `*` (`Created pod: web-abc-*`).
pub async fn events(client: &Client, ns: &str) -> Vec<(String, String, String, String)> {
    let list = kubegen_e2e_support::list_in::<Event>(client, ns).await;
    let mut out: Vec<_> = list
        .into_iter()
        .map(|e| {
            let source = e.source.and_then(|s| s.component).unwrap_or_default();
            assert_eq!(e.reporting_component.as_deref(), Some(source.as_str()));
            let object = &e.involved_object;
            (
                e.type_.unwrap_or_default(),
                e.reason.unwrap_or_default(),
                format!(
                    "{}/{}",
                    object.kind.as_deref().unwrap_or_default(),
                    object.name.as_deref().unwrap_or_default()
                ),
                pod_suffix_hidden(&e.message.unwrap_or_default()),
            )
        })
        .collect();
    out.sort();
    out
}

fn pod_suffix_hidden(message: &str) -> String {
    for prefix in ["Created pod: ", "Deleted pod: "] {
        if let Some(pod) = message.strip_prefix(prefix) {
            return format!("{prefix}{}", generated_suffix_hidden(pod));
        }
    }
    message.to_owned()
}

/// A generated Pod name with its random suffix replaced by `*` (`web-abc-*`); a name without a
/// dash as it is.
pub fn generated_suffix_hidden(name: &str) -> String {
    name.rsplit_once('-')
        .map_or_else(|| name.to_owned(), |(base, _)| format!("{base}-*"))
}

/// Builds the expected output of [`events`].
pub fn event(
    kind: &str,
    reason: &str,
    object: &str,
    message: &str,
) -> (String, String, String, String) {
    (kind.into(), reason.into(), object.into(), message.into())
}

/// Waits until the namespace's Events are exactly `want` (in any order).
pub async fn wait_for_events(
    client: &Client,
    ns: &str,
    mut want: Vec<(String, String, String, String)>,
) {
    want.sort();
    let what = format!("events {want:#?}");
    let mut last = Vec::new();
    let found = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            last = events(client, ns).await;
            if last == want {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    assert!(
        found.is_ok(),
        "timed out waiting for {what}; last seen {last:#?}"
    );
}
