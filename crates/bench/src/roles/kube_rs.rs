//! The kube-rs baseline: `kube_runtime::reflector` over `watcher`, until `InitDone`.
//!
//! This is how a kube-rs controller fills its cache, with kube-rs's own client (hyper + rustls with
//! ring; a test server speaks plain HTTP, a real one TLS through the kubeconfig). Two variants:
//! `kube-rs` is the default watcher config (a consistent, quorum read in pages of 500) with the
//! page size client-go uses; `kube-rs-any` is `any_semantic()` without a page size, one list from
//! the watch cache (what kubegen's informer asks for). `kube-rs-metadata` is the latter over
//! `PartialObjectMeta<K>` (kube-rs's metadata watcher), the peer of kubegen's metadata-only
//! informer.

use anyhow::{Context, Result, bail};
use futures_util::{Stream, StreamExt};
use kube::core::PartialObjectMeta;
use kube::runtime::watcher::{self, Event};
use kube::runtime::{WatchStreamExt, reflector};
use kube::{Api, ResourceExt};

use super::job::{BenchObject, Job, Role, check_count};
use crate::measure::{Cost, Snapshot, reset_peak_rss};

/// Runs a reflector until its store holds the initial list.
pub async fn sync<K: BenchObject>(job: &Job) -> Result<Cost> {
    let client = kube::Client::try_from(config(job).await?).context("building kube client")?;
    let api: Api<K> = Api::namespaced(client, &job.namespace);
    let config = if job.role == Role::KubeRsAny {
        watch_cache_list()
    } else {
        watcher::Config::default().page_size(500)
    };
    reset_peak_rss();
    let start = Snapshot::take();
    let (reader, writer) = reflector::store::<K>();
    let events = watcher::watcher(api, config);
    reflect(job, reader, writer, events, start).await
}

/// Runs a reflector of `PartialObjectMeta<K>` until its store holds the initial list (an
/// `Api<PartialObjectMeta<K>>` makes metadata-only requests, kube-rs's `metadata_watcher`).
pub async fn sync_metadata<K: BenchObject>(job: &Job) -> Result<Cost> {
    let client = kube::Client::try_from(config(job).await?).context("building kube client")?;
    let api: Api<PartialObjectMeta<K>> = Api::namespaced(client, &job.namespace);
    reset_peak_rss();
    let start = Snapshot::take();
    let (reader, writer) = reflector::store::<PartialObjectMeta<K>>();
    let events = watcher::watcher(api, watch_cache_list());
    reflect(job, reader, writer, events, start).await
}

/// `any_semantic()` without a page size: one list from the watch cache.
fn watch_cache_list() -> watcher::Config {
    let mut config = watcher::Config::default().any_semantic();
    config.page_size = None;
    config
}

/// Feeds `events` (managedFields stripped if the job says so) through a reflector into `writer`
/// until `InitDone`, and measures from `start`.
async fn reflect<T>(
    job: &Job,
    reader: reflector::Store<T>,
    writer: reflector::store::Writer<T>,
    events: impl Stream<Item = watcher::Result<Event<T>>> + Send,
    start: Snapshot,
) -> Result<Cost>
where
    T: kube::Resource + Clone + 'static,
    T::DynamicType: Eq + std::hash::Hash + Clone + Default,
{
    let strip = job.strip_managed_fields;
    let events = events.modify(move |object| {
        if strip {
            object.managed_fields_mut().clear();
        }
    });
    let mut stream = Box::pin(reflector::reflector(writer, events));
    loop {
        match stream.next().await {
            Some(Ok(Event::InitDone)) => break,
            Some(Ok(_)) => {}
            Some(Err(error)) => bail!("kube-rs watcher failed: {error}"),
            None => bail!("kube-rs watcher ended before InitDone"),
        }
    }
    let end = Snapshot::take();
    check_count(job.role, reader.state().len(), job.expect)?;
    crate::measure::exit_with(&Cost::between(&start, &end, job.expect as u64))
}

/// kube-rs's client configuration: the job's kubeconfig, or its plain URL.
async fn config(job: &Job) -> Result<kube::Config> {
    let Some(path) = &job.kubeconfig else {
        let uri = job.url.parse().context("parsing server URL")?;
        return Ok(kube::Config::new(uri));
    };
    let kubeconfig = kube::config::Kubeconfig::read_from(path)
        .with_context(|| format!("reading kubeconfig {}", path.display()))?;
    let options = kube::config::KubeConfigOptions::default();
    kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .context("kube-rs config from the kubeconfig")
}
