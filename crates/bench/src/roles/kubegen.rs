//! The kubegen client: `SharedIndexInformer` over `ClientListWatch` (kubegen-client), until
//! synced; over whole objects in JSON (`kubegen`) or protobuf (`kubegen-protobuf`), or over `PartialObjectMeta<K>` (`kubegen-metadata`, the
//! list-watch a factory's `metadata_informer_for::<K>()` builds); each also with its cache kept
//! as bytes (`, byte store` rows, `StoreMode::Bytes`).
//!
//! "Synced" is measured strictly: a counting handler has received an `on_add` for every listed
//! object (so the indexer holds them all, since it is updated before handlers are notified) and
//! `has_synced()` is true. The handler signals the moment its count is reached, rather than
//! `wait_for_cache_sync`'s 100 ms poll, which would round the wall time up.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use kube_core::Selector;
use kubegen_cache::{
    ClientListWatch, EventHandler, InformerOptions, SharedIndexInformer, StoreMode,
    strip_managed_fields,
};
use kubegen_client::{
    ApiObject, Client, Config, ListOptions, PartialObjectMeta, ResourceClient, WireFormat,
};
use tokio::sync::Notify;

use super::job::{BenchObject, Job, check_count};
use crate::data::GROUP_LABEL;
use crate::http::kubeconfig_client;
use crate::measure::{Cost, Snapshot, reset_peak_rss};

/// Counts adds and wakes the runner when `target` is reached.
struct CountingHandler {
    seen: AtomicUsize,
    target: usize,
    done: Arc<Notify>,
}

impl<K: Send + Sync + 'static> EventHandler<K> for CountingHandler {
    fn on_add(&self, _obj: &Arc<K>, _is_in_initial_list: bool) {
        if self.seen.fetch_add(1, Ordering::AcqRel) + 1 == self.target {
            self.done.notify_one();
        }
    }
}

/// Runs an informer of whole `K`s, read in `format`, until its handler has seen every object and
/// it reports synced.
pub async fn sync<K: BenchObject>(job: &Job, format: WireFormat) -> Result<Cost> {
    let client = client(job).await?;
    let resources =
        ResourceClient::<K>::namespaced(client, &job.namespace).with_wire_format(format);
    let mut options = InformerOptions::<K>::default();
    if job.strip_managed_fields {
        options.transform = Some(Arc::new(strip_managed_fields::<K>));
    }
    run(job, resources, options).await
}

/// Runs a metadata-only informer of `K` until synced.
pub async fn sync_metadata<K: BenchObject>(job: &Job) -> Result<Cost> {
    let client = client(job).await?;
    let resources =
        ResourceClient::<PartialObjectMeta<K>>::metadata_namespaced(client, &job.namespace);
    let mut options = InformerOptions::<PartialObjectMeta<K>>::default();
    if job.strip_managed_fields {
        options.transform = Some(Arc::new(strip_managed_fields::<PartialObjectMeta<K>>));
    }
    run(job, resources, options).await
}

/// The kubegen client of `job`'s server.
async fn client(job: &Job) -> Result<Client> {
    match &job.kubeconfig {
        Some(path) => kubeconfig_client(path, None).await,
        None => {
            let url = job.url.parse().context("parsing server URL")?;
            Client::new(Config::new(url)).context("building kubegen client")
        }
    }
}

/// Measures an informer over `resources`, pages of 500, from its start to synced.
async fn run<T: ApiObject>(
    job: &Job,
    resources: ResourceClient<T>,
    mut options: InformerOptions<T>,
) -> Result<Cost> {
    options.page_size = 500;
    options.streaming_list = job.streaming_list;
    if job.byte_store {
        options.store_mode = StoreMode::bytes();
    }
    let done = Arc::new(Notify::new());
    let handler = CountingHandler {
        seen: AtomicUsize::new(0),
        target: job.expect,
        done: Arc::clone(&done),
    };

    reset_peak_rss();
    let start = Snapshot::take();
    let informer = SharedIndexInformer::new(
        ClientListWatch::new(resources, ListOptions::default()),
        options,
    );
    informer
        .add_event_handler(handler)
        .context("registering the handler")?;
    informer.start();
    if job.expect > 0 {
        tokio::time::timeout(Duration::from_secs(600), done.notified())
            .await
            .context("informer did not deliver every object within 600 s")?;
    }
    let synced = async {
        while !informer.has_synced() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(600), synced)
        .await
        .context("informer did not sync within 600 s")?;
    let end = Snapshot::take();
    check_count(job.role, informer.indexer().len(), job.expect)?;
    if job.read_cost {
        eprintln!("{}", read_cost(&informer));
    }
    crate::measure::exit_with(&Cost::between(&start, &end, job.expect as u64))
}

/// Times reads of a synced cache, as a table row: `get` p50/p99 (µs) striding through the keys
/// (so that consecutive gets miss the recently decoded objects), a second `get` of the object
/// just read, and a `list` by `group=0` (1,000 objects at the benchmark's sizes) p50/p99.
fn read_cost<T: ApiObject>(informer: &SharedIndexInformer<T>) -> String {
    const GETS: usize = 20_000;
    let indexer = informer.indexer();
    let keys = indexer.list_keys();
    let key = |i: usize| keys[(i * 7919) % keys.len()].as_str();
    let mut first = Vec::with_capacity(GETS);
    let mut second = Vec::with_capacity(GETS);
    let mut misses = 0;
    for i in 0..GETS {
        for samples in [&mut first, &mut second] {
            let started = Instant::now();
            let found = indexer.get_by_key(key(i)).is_some();
            samples.push(started.elapsed());
            misses += usize::from(!found);
        }
    }
    let lister = informer.lister();
    let group: Selector = [(GROUP_LABEL, "0")].into_iter().collect();
    let mut listed = 0;
    let lists = (0..50)
        .map(|_| {
            let started = Instant::now();
            listed = lister.list(&group).len();
            started.elapsed()
        })
        .collect();
    let (get50, get99) = percentiles(first);
    let (again50, again99) = percentiles(second);
    let (list50, list99) = percentiles(lists);
    format!(
        "| {} objects ({misses} gets missed) | {get50:.1} / {get99:.1} | {again50:.1} / {again99:.1} | {listed}: {list50:.0} / {list99:.0} |",
        keys.len()
    )
}

/// p50 and p99 of `samples`, in µs.
fn percentiles(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let at = |q: f64| {
        let index = ((samples.len().saturating_sub(1)) as f64 * q) as usize;
        samples.get(index).map_or(0.0, |d| d.as_secs_f64() * 1e6)
    };
    (at(0.50), at(0.99))
}
