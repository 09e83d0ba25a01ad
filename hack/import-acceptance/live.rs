//! The live half of `hack/import-acceptance.sh` (with `KUBEGEN_IMPORT_LIVE=1`): every example
//! object a project ships is created through the generated typed clientset, on the in-process
//! test server and, when `KUBEGEN_E2E_KUBECONFIG` names one, on a real cluster. Then:
//! - the object read back keeps everything the example said (the server only adds defaults);
//! - a server-side apply of the re-encoded object (as its generated apply configuration) changes
//!   none of its content, and applying it again changes nothing at all (same resourceVersion);
//! - the test server stored what the real server stored (server-set metadata aside).
//!
//! Each example file gets namespaces of its own (`ia<run>-<file>-<namespace>`) and cluster-scoped
//! objects a suffix, so examples that reuse names do not meet; all are deleted at the end. The
//! owners' CRDs are installed from the input files and left installed.
//!
//! Usage: live --crds PATH... --examples PATH...

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kubegen_client::{
    Client, Config, CreateOptions, DeleteOptions, GetOptions, LoadOptions, ResourceClient,
};
use serde_json::{Value, json};

/// What one example did on one server: the object as created and read back, or the refusal.
type Verdict = Result<Value, String>;

/// How an example that the generated type refuses (as the CRD's schema would; the round trip
/// reports it apart) is reported: it reaches no server, on either side.
const NOT_FITTING: &str = "decode: ";

/// The field manager of the applies.
const MANAGER: &str = "kubegen-import-acceptance";

/// Creates `$value` through `$typed_client` as `$kind`, reads it back, applies it twice as
/// `$apply`, and checks what the module docs promise. Expands inside an `async` block that
/// returns [`Verdict`], where `CreateOptions`, `GetOptions`, `ApplyOptions` and `Duration` are in
/// scope (the generated `kinds.rs`).
macro_rules! live {
    ($typed_client:expr, $kind:ty, $apply:ty, $value:expr) => {{
        let typed_client = $typed_client;
        let typed: $kind = serde_json::from_value($value.clone()).map_err(|e| format!("{NOT_FITTING}{e}"))?;
        let mut created = None;
        // A real server serves a new CRD's kind a moment after it is Established.
        for _ in 0..50 {
            match typed_client.create(&typed, &CreateOptions::default()).await {
                Err(error) if error.is_not_found() => tokio::time::sleep(Duration::from_millis(200)).await,
                other => {
                    created = Some(other.map_err(|e| refusal(&e))?);
                    break;
                }
            }
        }
        // `generateName` examples (Argo's) are named by the server.
        let created = created.ok_or_else(|| "the kind was never served".to_owned())?;
        let name = created.metadata.name.clone().unwrap_or_default();
        let stored = typed_client.get(&name, &GetOptions::default()).await.map_err(|e| refusal(&e))?;
        let stored = serde_json::to_value(&stored).map_err(|e| e.to_string())?;
        let written = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
        if let Some(lost) = missing(&written, &stored, "") {
            return Err(format!("the server lost {lost}"));
        }
        let config: $apply = serde_json::from_value(written).map_err(|e| format!("apply configuration: {e}"))?;
        let mut options = ApplyOptions::new(MANAGER);
        options.force = true;
        let applied = typed_client.apply(&name, &config, &options).await.map_err(|e| refusal(&e))?;
        let again = typed_client.apply(&name, &config, &options).await.map_err(|e| refusal(&e))?;
        let applied = serde_json::to_value(&applied).map_err(|e| e.to_string())?;
        let again = serde_json::to_value(&again).map_err(|e| e.to_string())?;
        if content(&applied) != content(&stored) {
            return Err(format!(
                "applying the re-encoded object changed it:\n  before: {}\n  after:  {}",
                content(&stored),
                content(&applied)
            ));
        }
        if applied["metadata"]["resourceVersion"] != again["metadata"]["resourceVersion"] {
            return Err("applying the same object twice changed it the second time".to_owned());
        }
        Ok(comparable(&stored))
    }};
}

// After the macro: textual scope makes `live!` visible in the generated arms.
mod kinds;

/// A refusal as the two servers must agree on it: code and reason (messages may differ).
fn refusal(error: &kubegen_client::Error) -> String {
    match error.status() {
        Some(status) => format!("{} {}: {}", status.code, status.reason, status.message),
        None => error.to_string(),
    }
}

/// The first path that `written` has and `stored` lacks or holds differently, if any.
fn missing(written: &Value, stored: &Value, path: &str) -> Option<String> {
    match (written, stored) {
        (Value::Object(a), Value::Object(b)) => a.iter().find_map(|(key, value)| match b.get(key) {
            Some(other) => missing(value, other, &format!("{path}.{key}")),
            None if path == ".metadata" && key == "namespace" => None,
            None => Some(format!("{path}.{key}")),
        }),
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(index, (value, other))| missing(value, other, &format!("{path}[{index}]"))),
        // A server keeps a whole number written with a fraction as Go's decoder reads it
        // (`100.0` reads back `100`): the same value, not a loss.
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => None,
        _ if written != stored => Some(format!("{path}: wrote {written}, read {stored}")),
        _ => None,
    }
}

/// Everything but `metadata` (which an apply changes: managed fields, resourceVersion).
fn content(object: &Value) -> Value {
    let mut object = object.clone();
    if let Some(map) = object.as_object_mut() {
        map.remove("metadata");
    }
    object
}

/// The object without what each server sets its own way: uid, resourceVersion, timestamps.
fn comparable(object: &Value) -> Value {
    let mut object = object.clone();
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        for key in ["uid", "resourceVersion", "creationTimestamp"] {
            metadata.remove(key);
        }
        // A name the server generated from `generateName` differs from server to server.
        if metadata.contains_key("generateName") {
            metadata.remove("name");
        }
        if let Some(Value::Array(entries)) = metadata.get_mut("managedFields") {
            for entry in entries.iter_mut().filter_map(Value::as_object_mut) {
                entry.remove("time");
            }
        }
    }
    object
}

/// The YAML files of `paths` (directories: every `*.yaml` below, sorted).
fn yaml_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut below: Vec<PathBuf> = std::fs::read_dir(path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
                .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                .collect();
            below.sort();
            out.extend(yaml_files(&below));
        } else if path.extension().is_some_and(|ext| ext == "yaml") {
            out.push(path.clone());
        }
    }
    out
}

fn documents(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml::Deserializer::from_str(&text)
        .filter_map(|document| serde::Deserialize::deserialize(document).ok())
        .filter(|value: &Value| value.is_object())
        .collect()
}

/// One example object, placed where this run keeps it: `(label, object)`.
fn placed(run: &str, file: usize, index: usize, mut object: Value, namespaced: bool) -> (String, Value) {
    let name = object["metadata"]["name"]
        .as_str()
        .or_else(|| object["metadata"]["generateName"].as_str())
        .unwrap_or_default()
        .to_owned();
    let generated = object["metadata"]["name"].is_null();
    let metadata = &mut object["metadata"];
    if namespaced {
        let original = metadata["namespace"].as_str().unwrap_or("default").to_owned();
        let mut namespace = format!("ia{run}-{file}-{original}");
        namespace.truncate(63);
        metadata["namespace"] = Value::from(namespace.trim_end_matches('-'));
    } else if !generated {
        metadata["name"] = Value::from(format!("{name}-ia{run}-{file}"));
    }
    (format!("file {file} #{index} {name}"), object)
}

/// Runs every example on `client`'s server; returns each one's verdict by label.
async fn run_on(client: &Client, crds: &[PathBuf], examples: &[(String, Value, bool)]) -> BTreeMap<String, Verdict> {
    // Installed only where missing: on a server that has them, Gateway API's own
    // `safe-upgrades` policy refuses a create of its development CRDs before the existence check.
    let definitions: ResourceClient<CustomResourceDefinition> = ResourceClient::cluster(client.clone());
    for file in yaml_files(crds) {
        for object in documents(&file) {
            // Kustomize's file list beside the CRDs (Gateway API's experimental channel) has
            // no `kind`: `kubectl apply -k` reads it, no server is sent it.
            if object["kind"].is_null() {
                continue;
            }
            let name = object["metadata"]["name"].as_str().unwrap_or_default();
            if object["kind"] == "CustomResourceDefinition"
                && definitions.get(name, &GetOptions::default()).await.is_ok()
            {
                continue;
            }
            kubegen_runtime::manifests::create_object(client, object.clone())
                .await
                .unwrap_or_else(|e| panic!("installing {name} of {}: {e}", file.display()));
        }
    }
    let namespaces: ResourceClient<Namespace> = ResourceClient::cluster(client.clone());
    let mut verdicts = BTreeMap::new();
    let mut created_namespaces = Vec::new();
    for (label, object, namespaced) in examples {
        if *namespaced {
            let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default().to_owned();
            if !created_namespaces.contains(&namespace) {
                let body: Namespace = serde_json::from_value(json!({"metadata": {"name": namespace}}))
                    .unwrap_or_else(|e| panic!("{e}"));
                match namespaces.create(&body, &CreateOptions::default()).await {
                    Ok(_) => {}
                    Err(error) if error.is_already_exists() => {}
                    Err(error) => panic!("creating namespace {namespace}: {error}"),
                }
                created_namespaces.push(namespace);
            }
        }
        let verdict = kinds::by_kind(client, object)
            .await
            .unwrap_or_else(|| Err("no imported kind".to_owned()));
        verdicts.insert(label.clone(), verdict);
    }
    for namespace in created_namespaces {
        let _ = namespaces.delete(&namespace, &DeleteOptions::default()).await;
    }
    for (_, object, _) in examples.iter().filter(|(_, _, namespaced)| !namespaced) {
        let _ = kinds::delete_cluster_scoped(client, object).await;
    }
    verdicts
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let split = args.iter().position(|arg| arg == "--examples").expect("--examples");
    let crds: Vec<PathBuf> = args[1..split].iter().map(PathBuf::from).collect();
    let example_files = yaml_files(&args[split + 1..].iter().map(PathBuf::from).collect::<Vec<_>>());
    let run = format!("{:x}", std::process::id());
    let mut examples = Vec::new();
    for (file, path) in example_files.iter().enumerate() {
        for (index, object) in documents(path).into_iter().enumerate() {
            let Some(namespaced) = kinds::namespaced(&object) else { continue };
            if object["metadata"]["name"].is_null() && object["metadata"]["generateName"].is_null() {
                continue; // a fragment of a user guide, not an object
            }
            let (label, object) = placed(&run, file, index, object, namespaced);
            examples.push((format!("{label} ({})", path.display()), object, namespaced));
        }
    }

    let server = kubegen_testserver::TestServer::start().await;
    let on_test_server = run_on(&server.client(), &crds, &examples).await;
    let mut failed = 0;
    let mut report = |server: &str, verdicts: &BTreeMap<String, Verdict>| {
        for (label, verdict) in verdicts {
            if let Err(problem) = verdict
                && !problem.starts_with("422 ")
                && !problem.starts_with(NOT_FITTING)
            {
                failed += 1;
                eprintln!("{server}: {label}: {problem}");
            }
        }
    };
    report("test server", &on_test_server);
    let refused = on_test_server
        .values()
        .filter(|verdict| verdict.as_ref().is_err_and(|problem| problem.starts_with("422 ")))
        .count();
    let not_fitting = on_test_server
        .values()
        .filter(|verdict| verdict.as_ref().is_err_and(|problem| problem.starts_with(NOT_FITTING)))
        .count();
    println!(
        "live: {} examples on the test server, {refused} refused (422), {not_fitting} not fitting the CRD's types",
        on_test_server.len()
    );
    if let Ok(path) = std::env::var("KUBEGEN_E2E_KUBECONFIG") {
        let config = Config::load(&LoadOptions::default().kubeconfig_path(path.clone()))
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let client = Client::new(config).unwrap_or_else(|e| panic!("{path}: {e}"));
        let on_cluster = run_on(&client, &crds, &examples).await;
        report("cluster", &on_cluster);
        for (label, real) in &on_cluster {
            let ours = &on_test_server[label];
            let same = match (ours, real) {
                (Ok(a), Ok(b)) => a == b,
                (Err(a), Err(b)) => a.split(':').next() == b.split(':').next(),
                _ => false,
            };
            if !same {
                failed += 1;
                eprintln!("{label}: the servers differ\n  test server: {ours:?}\n  cluster:     {real:?}");
            }
        }
        println!("live: {} examples compared with {path}", on_cluster.len());
    }
    if failed > 0 {
        eprintln!("live: {failed} problems");
        std::process::exit(1);
    }
}
