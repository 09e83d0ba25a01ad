//! `heap-profile`: where the bytes of an informer's cache go, part by part.
//!
//! ```text
//! cargo run --release -p kubegen-bench --bin heap-profile -- \
//!     --kubeconfig /opt/k8s136/admin.kubeconfig --namespace kubegen-bench-cm-60000
//! cargo run --release -p kubegen-bench --bin heap-profile -- \
//!     --kubeconfig /opt/k8s136/admin.kubeconfig --namespace kubegen-bench-deploy-10000 --dataset deployments
//! ```
//!
//! One process, a counting allocator, no guessing: the list is fetched once (as a real server
//! writes it, `managedFields` included), decoded into the k8s-openapi types the cache holds, and
//! then taken apart one part at a time, each part's share being the live bytes its removal frees.
//! The last row is what the informer adds around the objects (the `Arc`s, the DeltaFIFO's and the
//! indexer's keys and maps), measured by syncing a real `SharedIndexInformer` from the decoded
//! objects. Beside each part: what client-go keeps for it (`FieldsV1` as its raw JSON bytes).
//!
//! The informer-sync datasets are loaded by `informer-sync` (`--n`, `--deployments`); this binary
//! only reads them.

use std::alloc::System;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Parser;
use k8s_openapi::Metadata;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, ObjectMeta};
use kube_core::{ObjectList, TypeMeta, WatchEvent};
use kubegen_bench::http::RawClient;
use kubegen_bench::roles::{BenchObject, Dataset};
use kubegen_cache::{
    EventHandler, EventStream, InformerOptions, ListRequest, ListWatch, ListWatchError,
    SharedIndexInformer, WatchRequest,
};
use serde_json::Value;
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};
use tokio::sync::Notify;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[derive(Parser, Debug)]
#[command(about = "Where the bytes of an informer's cache go, part by part")]
struct Args {
    /// The server's kubeconfig (its current context).
    #[arg(long)]
    kubeconfig: PathBuf,
    /// The namespace holding the dataset.
    #[arg(long)]
    namespace: String,
    /// Which dataset the namespace holds.
    #[arg(long, default_value = "configmaps")]
    dataset: Dataset,
}

/// Bytes allocated and not yet freed.
fn live() -> i64 {
    let stats = INSTRUMENTED_SYSTEM.stats();
    stats.bytes_allocated as i64 + stats.bytes_reallocated as i64 - stats.bytes_deallocated as i64
}

/// One row of the table.
struct Part {
    name: &'static str,
    bytes: i64,
    /// What client-go keeps for the same part, when it differs in kind (raw bytes).
    client_go: Option<i64>,
}

/// Removes one part of every object and returns the live bytes that freed.
fn take<K>(items: &mut [K], mut part: impl FnMut(&mut K)) -> i64 {
    let before = live();
    for item in items.iter_mut() {
        part(item);
    }
    before - live()
}

/// The `FieldsV1` trees of every object: bytes freed, raw JSON bytes, map nodes.
fn take_fields_v1<K: Metadata<Ty = ObjectMeta>>(items: &mut [K]) -> (i64, i64, usize) {
    let mut raw = 0i64;
    let mut maps = 0usize;
    let freed = take(items, |item| {
        for entry in item.metadata_mut().managed_fields.iter_mut().flatten() {
            if let Some(fields) = entry.fields_v1.take() {
                raw += serde_json::to_vec(&fields.0).map_or(0, |v| v.len()) as i64;
                maps += non_empty_maps(&fields.0);
            }
        }
    });
    (freed, raw, maps)
}

/// How many non-empty JSON objects a value holds (each is one B-tree leaf at least).
fn non_empty_maps(value: &Value) -> usize {
    match value {
        Value::Object(map) if !map.is_empty() => {
            1 + map.values().map(non_empty_maps).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(non_empty_maps).sum(),
        _ => 0,
    }
}

/// Profiles a list of `K`, `payload` removing the kind's own content (data, spec and status).
async fn profile<K>(client: &RawClient, path: &str, payload: fn(&mut K)) -> Result<()>
where
    K: BenchObject + Metadata<Ty = ObjectMeta>,
{
    let body = client
        .get(&format!("{path}?resourceVersion=0"))
        .await
        .with_context(|| format!("listing {path}"))?;
    let base = live();
    let list: ObjectList<K> = serde_json::from_slice(&body).context("decoding the list")?;
    let mut items = list.items;
    let count = items.len();
    if count == 0 {
        bail!("{path} holds no objects: load them with informer-sync first");
    }
    let decoded = live() - base;

    let (fields, fields_raw, maps) = take_fields_v1(&mut items);
    let entries = take(&mut items, |item| item.metadata_mut().managed_fields = None);
    let labels = take(&mut items, |item| {
        let meta = item.metadata_mut();
        meta.labels = None;
        meta.annotations = None;
    });
    let content = take(&mut items, payload);
    let shell = decoded - fields - entries - labels - content;
    drop(items);
    // The informer gets a fresh decode of the same list (a clone would share nothing anyway).
    let fresh: ObjectList<K> = serde_json::from_slice(&body).context("decoding the list")?;
    drop(body);
    let cache = informer_overhead(fresh.items).await?;
    let parts = [
        Part {
            name: "managedFields: fieldsV1 trees",
            bytes: fields,
            client_go: Some(fields_raw),
        },
        Part {
            name: "managedFields: the rest of each entry",
            bytes: entries,
            client_go: None,
        },
        Part {
            name: "labels and annotations (BTreeMap<String, String>)",
            bytes: labels,
            client_go: None,
        },
        Part {
            name: "the kind's content (data; spec and status)",
            bytes: content,
            client_go: None,
        },
        Part {
            name: "the rest of metadata, and each object's own struct",
            bytes: shell,
            client_go: None,
        },
        Part {
            name: "informer: Arc, DeltaFIFO and indexer keys and maps",
            bytes: cache,
            client_go: None,
        },
    ];
    print_table(path, count, maps, &parts);
    Ok(())
}

fn print_table(path: &str, count: usize, maps: usize, parts: &[Part]) {
    const MIB: f64 = 1024.0 * 1024.0;
    let total: i64 = parts.iter().map(|part| part.bytes).sum();
    println!("\n### {count} objects of {path}\n");
    println!("| part | MiB | bytes per object | share | client-go keeps |");
    println!("|---|---:|---:|---:|---:|");
    for part in parts {
        let client_go = part.client_go.map_or_else(
            || "same".to_owned(),
            |raw| format!("{} B/object (raw JSON)", raw / count as i64),
        );
        println!(
            "| {} | {:.1} | {} | {:.0}% | {client_go} |",
            part.name,
            part.bytes as f64 / MIB,
            part.bytes / count as i64,
            100.0 * part.bytes as f64 / total as f64,
        );
    }
    println!(
        "| **total** | **{:.1}** | **{}** | | |",
        total as f64 / MIB,
        total / count as i64
    );
    println!(
        "\nfieldsV1: {:.1} non-empty maps per object (a BTreeMap leaf of String → Value is {} bytes however few entries it holds)",
        maps as f64 / count as f64,
        btree_leaf_bytes()
    );
}

/// The size of one B-tree leaf of `String` → `serde_json::Value`: 11 keys and 11 values, plus
/// the parent link and lengths.
fn btree_leaf_bytes() -> usize {
    11 * (size_of::<String>() + size_of::<Value>()) + 16
}

/// The live bytes an informer adds around `items` once synced: `items` are moved in (not
/// copied), so the growth is the `Arc`s and the FIFO's and indexer's own structures.
async fn informer_overhead<K: BenchObject>(items: Vec<K>) -> Result<i64> {
    let count = items.len();
    let inline = (count * size_of::<K>()) as i64;
    let before = live();
    let source = OneList(parking_lot::Mutex::new(Some(items)));
    let done = Arc::new(Notify::new());
    let handler = Count {
        seen: AtomicUsize::new(0),
        target: count,
        done: Arc::clone(&done),
    };
    let informer = SharedIndexInformer::new(source, InformerOptions::<K>::default());
    informer.add_event_handler(handler).context("registering")?;
    informer.start();
    tokio::time::timeout(Duration::from_secs(120), done.notified())
        .await
        .context("the informer did not sync")?;
    // Let the FIFO settle: its popped entries are freed right after the handler ran.
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The Vec that held the objects is freed as they move into Arcs: count it back.
    let grown = live() - before + inline;
    informer
        .shutdown_and_wait(Duration::from_secs(10))
        .await
        .context("stopping the informer")?;
    Ok(grown)
}

/// Hands out one list, then an idle watch.
struct OneList<K>(parking_lot::Mutex<Option<Vec<K>>>);

impl<K: BenchObject> ListWatch<K> for OneList<K> {
    type Watch = Idle;

    async fn list(&self, _req: &ListRequest) -> Result<ObjectList<K>, ListWatchError> {
        Ok(ObjectList {
            types: TypeMeta {
                api_version: "v1".to_owned(),
                kind: "List".to_owned(),
            },
            metadata: ListMeta {
                resource_version: Some("1".to_owned()),
                ..ListMeta::default()
            },
            items: self.0.lock().take().unwrap_or_default(),
        })
    }

    async fn watch(&self, _req: &WatchRequest) -> Result<Idle, ListWatchError> {
        Ok(Idle)
    }

    async fn serves_streaming_lists(&self) -> Option<bool> {
        Some(false)
    }
}

/// A watch on which nothing happens.
struct Idle;

impl<K: Send + 'static> EventStream<K> for Idle {
    async fn next_event(&mut self) -> Option<Result<WatchEvent<K>, ListWatchError>> {
        std::future::pending().await
    }
}

/// Wakes the profiler when every object was added.
struct Count {
    seen: AtomicUsize,
    target: usize,
    done: Arc<Notify>,
}

impl<K: Send + Sync + 'static> EventHandler<K> for Count {
    fn on_add(&self, _obj: &Arc<K>, _is_in_initial_list: bool) {
        if self.seen.fetch_add(1, Ordering::AcqRel) + 1 == self.target {
            self.done.notify_one();
        }
    }
}

fn main() -> Result<()> {
    let args = Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("building the runtime")?;
    runtime.block_on(async {
        let client = RawClient::from_kubeconfig(&args.kubeconfig).await?;
        let path = args.dataset.collection(&args.namespace);
        match args.dataset {
            Dataset::ConfigMaps => {
                profile::<ConfigMap>(&client, &path, |cm| {
                    cm.data = None;
                    cm.binary_data = None;
                })
                .await
            }
            Dataset::Deployments => {
                profile::<Deployment>(&client, &path, |deployment| {
                    deployment.spec = None;
                    deployment.status = None;
                })
                .await
            }
        }
    })
}
