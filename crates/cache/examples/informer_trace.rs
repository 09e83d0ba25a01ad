//! Watch an informer work, step by step.
//!
//! Starts the in-process test server, creates a few ConfigMaps, runs a ConfigMap informer with a
//! small page size against it, then changes the objects, breaks the watch and forces a relist.
//! The cache crate's own `debug`/`trace` events show each step of the pipeline (list page,
//! Replace, watch event, index update); the handler prints each call it receives.
//!
//! Run it with: `cargo run -p kubegen-cache --features client --example informer_trace`
//! (set `RUST_LOG=kubegen_cache=trace` for even more detail, `=info` for less).
//!
//! With `-- --mermaid` it prints the same trip as a Mermaid sequence diagram instead (API server,
//! Reflector, DeltaFifo, process loop, Indexer, handler), ready for a markdown file that a forge
//! renders: `... --example informer_trace -- --mermaid > trace.md`.
#![allow(clippy::unwrap_used)] // an example: failing loudly is fine

use std::{collections::BTreeMap, sync::Arc, sync::Mutex, time::Duration};

use k8s_openapi::{api::core::v1::ConfigMap, apimachinery::pkg::apis::meta::v1::ObjectMeta};
use kubegen_cache::{
    ClientListWatch, DeletedObject, EventHandler, InformerOptions, SharedIndexInformer,
    strip_managed_fields, wait_for_cache_sync,
};
use kubegen_client::{
    Client, Config, CreateOptions, DeleteOptions, ListOptions, ResourceClient, UpdateOptions,
};
use kubegen_testserver::{ServerOptions, TestServer};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// Where the trace goes: text lines as they happen, or one Mermaid diagram at the end.
enum Output {
    Text,
    Mermaid(Mutex<Vec<String>>),
}

static OUTPUT: std::sync::OnceLock<Output> = std::sync::OnceLock::new();

/// A step of the tour ("== 1. ...").
fn step(text: &str) {
    match OUTPUT.get() {
        Some(Output::Mermaid(lines)) => {
            let text = text.trim_start_matches("== ").replace([';', '#'], ",");
            lines
                .lock()
                .unwrap()
                .push(format!("    Note over API,Handler: {text}"));
        }
        _ => println!("{text}"),
    }
}

/// A call the handler received.
fn handled(call: &str) {
    match OUTPUT.get() {
        Some(Output::Mermaid(lines)) => lines
            .lock()
            .unwrap()
            .push(format!("    Process->>Handler: {call}")),
        _ => println!("    handler: {call}"),
    }
}

/// Turns the cache crate's own `tracing` events into the diagram's arrows: each event names the
/// step of the pipeline that emitted it (see docs/informer-internals.md).
struct MermaidLayer;

#[derive(Default)]
struct Fields(BTreeMap<&'static str, String>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(
            field.name(),
            format!("{value:?}").trim_matches('"').to_owned(),
        );
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name(), value.to_owned());
    }
}

impl<S: tracing::Subscriber> Layer<S> for MermaidLayer {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let Some(Output::Mermaid(lines)) = OUTPUT.get() else {
            return;
        };
        let mut fields = Fields::default();
        event.record(&mut fields);
        let field = |name: &str| fields.0.get(name).cloned().unwrap_or_default();
        let arrows: Vec<String> = match field("message").as_str() {
            "listing" => vec![format!(
                "Reflector->>API: LIST resourceVersion={}",
                field("rv")
            )],
            "listed page" => vec![format!(
                "API-->>Reflector: page of {} (more: {})",
                field("items"),
                field("more")
            )],
            "replace" => vec![format!(
                "Reflector->>Fifo: replace({} objects), list RV {}",
                field("items"),
                field("rv")
            )],
            "watch opened" => vec![format!("Reflector->>API: WATCH from {}", field("rv"))],
            "watch event" => vec![format!(
                "API-->>Reflector: {} {} (RV {})",
                field("event"),
                field("key"),
                field("rv")
            )],
            "bookmark" => vec![format!("API-->>Reflector: BOOKMARK {}", field("rv"))],
            "watch ended, re-watching" => {
                vec![format!(
                    "API-->>Reflector: watch closed at RV {}",
                    field("rv")
                )]
            }
            "watch history expired, relisting at the last synced version" => vec![format!(
                "API-->>Reflector: 410 Gone: relist at {}",
                field("rv")
            )],
            "backing off" => vec![format!(
                "Note over Reflector: back off {}, then {}",
                field("delay"),
                field("then")
            )],
            "delta queued" => vec![format!(
                "Reflector->>Fifo: {} {}",
                field("delta"),
                field("key")
            )],
            "streaming list done, replace" => vec![
                format!(
                    "API-->>Reflector: initial events, then the initial-events-end bookmark (RV {})",
                    field("rv")
                ),
                format!("Reflector->>Fifo: replace({} objects)", field("items")),
            ],
            "index update" => {
                let verb = if field("delta") == "Deleted" {
                    "remove"
                } else {
                    "store"
                };
                vec![
                    format!("Fifo->>Process: pop {} ({})", field("key"), field("delta")),
                    format!("Process->>Indexer: {verb} {}", field("key")),
                ]
            }
            _ => Vec::new(),
        };
        let mut lines = lines.lock().unwrap();
        lines.extend(
            arrows
                .into_iter()
                .map(|a| format!("    {}", a.replace([';', '#'], ","))),
        );
    }
}

fn init_output() {
    let mermaid = std::env::args().any(|a| a == "--mermaid");
    let output = if mermaid {
        Output::Mermaid(Mutex::new(Vec::new()))
    } else {
        Output::Text
    };
    let _ = OUTPUT.set(output);
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("kubegen_cache=trace"));
    if mermaid {
        tracing_subscriber::registry()
            .with(MermaidLayer.with_filter(EnvFilter::new("kubegen_cache=trace")))
            .init();
        return;
    }
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stdout());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .without_time()
        .with_ansi(ansi)
        .init();
}

/// Prints the diagram, fenced for markdown, when `--mermaid` asked for one.
fn finish() {
    if let Some(Output::Mermaid(lines)) = OUTPUT.get() {
        println!("```mermaid");
        println!("sequenceDiagram");
        for participant in [
            "API as API server",
            "Reflector",
            "Fifo as DeltaFifo",
            "Process as process loop",
            "Indexer",
            "Handler",
        ] {
            println!("    participant {participant}");
        }
        for line in lines.lock().unwrap().iter() {
            println!("{line}");
        }
        println!("```");
    }
}

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
        handled(&format!("on_add {}{initial}", describe(obj)));
    }
    fn on_update(&self, old: &Arc<ConfigMap>, new: &Arc<ConfigMap>) {
        handled(&format!(
            "on_update {} to rv {}",
            describe(old),
            new.metadata.resource_version.as_deref().unwrap_or_default()
        ));
    }
    fn on_resync(&self, _: &Arc<ConfigMap>, new: &Arc<ConfigMap>) {
        handled(&format!("on_resync {}", describe(new)));
    }
    fn on_delete(&self, obj: &DeletedObject<ConfigMap>) {
        match obj {
            DeletedObject::Known(o) => handled(&format!("on_delete {}", describe(o))),
            DeletedObject::Tombstone { key, last_known } => {
                handled(&format!(
                    "on_delete TOMBSTONE {key}, last known {}",
                    describe(last_known)
                ));
            }
        }
    }
}

async fn pause() {
    tokio::time::sleep(Duration::from_millis(300)).await;
}

#[tokio::main]
async fn main() {
    init_output();

    // No controller-manager: its own informers would trace their namespaces and ServiceAccounts
    // beside ours.
    let mut server_options = ServerOptions::default();
    server_options.controller_manager = false;
    let server = TestServer::start_with(server_options).await;
    let client = Client::new(Config::new(server.url().parse().unwrap())).unwrap();
    let configmaps = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    step("== 1. the API server holds 5 ConfigMaps");
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

    step("== 2. start the informer: LIST in pages of 2, one Replace, pop, index, notify");
    let mut options = InformerOptions::default();
    options.page_size = 2;
    // The paged LIST this tour walks through; the default, a streaming list, has no pages.
    options.streaming_list = false;
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
    step(&format!(
        "== synced: the cache holds {} objects",
        informer.indexer().len()
    ));

    step("== 3. update demo-0 and delete demo-1: WATCH events become deltas");
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

    step("== 4. the server closes the watch: the reflector re-watches from its last RV, no relist");
    server.faults().drop_watches();
    pause().await;

    step(
        "== 5. while the watch hangs, demo-2 is deleted and history is compacted: 410, relist, tombstone",
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
    step(&format!("== done: cache = {}", keys.join(", ")));
    informer.shutdown();
    finish();
}
