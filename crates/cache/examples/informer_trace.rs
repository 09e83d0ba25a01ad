//! Watch an informer work, step by step.
//!
//! Starts the in-process test server, creates a few ConfigMaps, runs a ConfigMap informer with a
//! small page size against it, then changes the objects, breaks the watch and forces a relist.
//! The cache crate's own `debug`/`trace` events show each step of the pipeline (list page,
//! Replace, watch event, index update); the handler prints each call it receives.
//!
//! Run it with: `cargo run -p kubegen-cache --features client --example informer_trace`
//! (set `RUST_LOG=kubegen_cache=trace` for even more detail, `=info` for less).
#![allow(clippy::unwrap_used)] // an example: failing loudly is fine

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use k8s_openapi::{api::core::v1::ConfigMap, apimachinery::pkg::apis::meta::v1::ObjectMeta};
use kubegen_cache::{
    ClientListWatch, DeletedObject, EventHandler, InformerOptions, SharedIndexInformer,
    strip_managed_fields, wait_for_cache_sync,
};
use kubegen_client::{
    Client, Config, CreateOptions, DeleteOptions, ListOptions, ResourceClient, UpdateOptions,
};
use kubegen_testserver::TestServer;
use tracing_subscriber::EnvFilter;

/// Prints every notification, the way a controller's handler would enqueue a key.
struct PrintingHandler;

fn describe(cm: &ConfigMap) -> String {
    let name = cm.metadata.name.as_deref().unwrap_or_default();
    let rv = cm.metadata.resource_version.as_deref().unwrap_or_default();
    format!("{name} (rv {rv})")
}

impl EventHandler<ConfigMap> for PrintingHandler {
    fn on_add(&self, obj: &Arc<ConfigMap>, is_in_initial_list: bool) {
        let initial = if is_in_initial_list {
            ", from the initial list"
        } else {
            ""
        };
        println!("    handler: on_add {}{initial}", describe(obj));
    }
    fn on_update(&self, old: &Arc<ConfigMap>, new: &Arc<ConfigMap>) {
        println!(
            "    handler: on_update {} -> rv {}",
            describe(old),
            new.metadata.resource_version.as_deref().unwrap_or_default()
        );
    }
    fn on_resync(&self, _: &Arc<ConfigMap>, new: &Arc<ConfigMap>) {
        println!("    handler: on_resync {}", describe(new));
    }
    fn on_delete(&self, obj: &DeletedObject<ConfigMap>) {
        match obj {
            DeletedObject::Known(o) => println!("    handler: on_delete {}", describe(o)),
            DeletedObject::Tombstone { key, last_known } => {
                println!(
                    "    handler: on_delete TOMBSTONE {key}, last known {}",
                    describe(last_known)
                );
            }
        }
    }
}

async fn pause() {
    tokio::time::sleep(Duration::from_millis(300)).await;
}

#[tokio::main]
async fn main() {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("kubegen_cache=trace"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stdout());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .without_time()
        .with_ansi(ansi)
        .init();

    let server = TestServer::start().await;
    let client = Client::new(Config::new(server.url().parse().unwrap())).unwrap();
    let configmaps = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    println!("== 1. the API server holds 5 ConfigMaps");
    for i in 0..5 {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(format!("demo-{i}")),
                ..ObjectMeta::default()
            },
            data: Some(BTreeMap::from([("step".to_owned(), "created".to_owned())])),
            ..ConfigMap::default()
        };
        configmaps
            .create(&cm, &CreateOptions::default())
            .await
            .unwrap();
    }

    println!("== 2. start the informer: LIST in pages of 2, one Replace, pop, index, notify");
    let mut options = InformerOptions::default();
    options.page_size = 2;
    options.transform = Some(Arc::new(strip_managed_fields));
    let list_watch = ClientListWatch::new(
        ResourceClient::all_namespaces(client),
        ListOptions::default(),
    );
    let informer = SharedIndexInformer::new(list_watch, options);
    informer.add_event_handler(PrintingHandler).unwrap();
    informer.start();
    wait_for_cache_sync(Duration::from_secs(10), &[&informer])
        .await
        .unwrap();
    pause().await;
    println!(
        "== synced: the cache holds {} objects",
        informer.indexer().len()
    );

    println!("== 3. update demo-0 and delete demo-1: WATCH events become deltas");
    let mut cm = configmaps.get("demo-0", &Default::default()).await.unwrap();
    cm.data = Some(BTreeMap::from([("step".to_owned(), "updated".to_owned())]));
    configmaps
        .update(&cm, &UpdateOptions::default())
        .await
        .unwrap();
    configmaps
        .delete("demo-1", &DeleteOptions::default())
        .await
        .unwrap();
    pause().await;

    println!(
        "== 4. the server closes the watch: the reflector re-watches from its last RV, no relist"
    );
    server.faults().drop_watches();
    pause().await;

    println!(
        "== 5. while the watch hangs, demo-2 is deleted and history is compacted: 410, relist, tombstone"
    );
    server.faults().stall_watches(true);
    configmaps
        .delete("demo-2", &DeleteOptions::default())
        .await
        .unwrap();
    server.faults().expire_history();
    server.faults().drop_watches();
    server.faults().stall_watches(false);
    tokio::time::sleep(Duration::from_secs(3)).await;

    let mut keys: Vec<String> = informer
        .indexer()
        .list_keys()
        .iter()
        .map(ToString::to_string)
        .collect();
    keys.sort();
    println!("== done: cache = {keys:?}");
    informer.shutdown();
}
