//! `decode-cost`: CPU to decode one list body in process, JSON (serde_json, the floor the
//! informer's JSON decoder is measured against) vs protobuf (the codec's streaming decoder the
//! client uses for built-in kinds), into the same k8s-openapi types.
//!
//! The bodies are built from the benchmark data set (`data`): the JSON as a server writes it, the
//! protobuf by the codec's encoder from that JSON. Single-threaded, so wall time is CPU time; the
//! best of `--runs` is reported, after one warm-up run.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Parser;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube_core::ObjectList;
use kubegen_bench::data;
use kubegen_codec::{ListDecoder, ProtoKind};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

#[derive(Parser, Debug)]
#[command(about = "Decode CPU of a list body: JSON vs protobuf, in process")]
struct Args {
    /// ConfigMaps in the ConfigMap list.
    #[arg(long, default_value_t = 10_000)]
    configmaps: usize,
    /// Deployments (with managedFields) in the Deployment list.
    #[arg(long, default_value_t = 2_000)]
    deployments: usize,
    /// Measured runs per decoder (the best is reported).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Chunk size the streaming protobuf decoder is fed in (a TLS record is 16 KiB).
    #[arg(long, default_value_t = 16 * 1024)]
    chunk: usize,
}

/// One list body in both encodings.
struct Bodies {
    json: Vec<u8>,
    protobuf: Vec<u8>,
}

fn bodies<K: Serialize>(api_version: &str, kind: &str, items: &[K]) -> Result<Bodies> {
    let mut items: Vec<Value> = items
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()?;
    for item in &mut items {
        if let Some(object) = item.as_object_mut() {
            object.remove("apiVersion");
            object.remove("kind");
        }
    }
    let list = serde_json::json!({
        "apiVersion": api_version,
        "kind": format!("{kind}List"),
        "metadata": {"resourceVersion": "12345"},
        "items": items,
    });
    Ok(Bodies {
        json: serde_json::to_vec(&list)?,
        protobuf: kubegen_codec::encode_object(&list).context("encoding the list as protobuf")?,
    })
}

fn best<T>(runs: usize, mut decode: impl FnMut() -> Result<T>) -> Result<Duration> {
    drop(decode()?);
    let mut best = Duration::MAX;
    for _ in 0..runs {
        let start = Instant::now();
        let decoded = decode()?;
        best = best.min(start.elapsed());
        drop(decoded);
    }
    Ok(best)
}

fn measure<K: DeserializeOwned + Clone>(
    args: &Args,
    label: &str,
    proto: ProtoKind,
    bodies: &Bodies,
    count: usize,
) -> Result<String> {
    let json = best(args.runs, || {
        let list: ObjectList<K> = serde_json::from_slice(&bodies.json)?;
        anyhow::ensure!(
            list.items.len() == count,
            "JSON decoded {}",
            list.items.len()
        );
        Ok(list.items)
    })?;
    let protobuf = best(args.runs, || {
        let mut decoder = ListDecoder::<K>::new(proto);
        for chunk in bodies.protobuf.chunks(args.chunk) {
            decoder.feed(chunk)?;
        }
        let list = decoder.finish()?;
        anyhow::ensure!(
            list.items.len() == count,
            "protobuf decoded {}",
            list.items.len()
        );
        Ok(list.items)
    })?;
    let per = |d: Duration| d.as_nanos() as f64 / count as f64 / 1000.0;
    Ok(format!(
        "| {label} | {count} | {:.1} | {:.1} | {:.1} ({:.2} µs/obj) | {:.1} ({:.2} µs/obj) | {:.2}x |",
        bodies.json.len() as f64 / 1_048_576.0,
        bodies.protobuf.len() as f64 / 1_048_576.0,
        json.as_secs_f64() * 1000.0,
        per(json),
        protobuf.as_secs_f64() * 1000.0,
        per(protobuf),
        protobuf.as_secs_f64() / json.as_secs_f64(),
    ))
}

fn main() -> Result<()> {
    let args = Args::parse();
    let configmaps: Vec<ConfigMap> = (0..args.configmaps)
        .map(|i| data::config_map("bench", i))
        .collect();
    let deployments: Vec<Deployment> = (0..args.deployments)
        .map(|i| data::deployment("bench", i))
        .collect();
    let cm_proto = ProtoKind::lookup("v1", "ConfigMap").context("ConfigMap has no schema")?;
    let deploy_proto =
        ProtoKind::lookup("apps/v1", "Deployment").context("Deployment has no schema")?;
    let cm_bodies = bodies("v1", "ConfigMap", &configmaps)?;
    let deploy_bodies = bodies("apps/v1", "Deployment", &deployments)?;
    println!(
        "\n### Decode CPU of one list body, in process (best of {}, chunks of {} B)\n",
        args.runs, args.chunk
    );
    println!(
        "| list | objects | JSON MiB | protobuf MiB | serde_json ms | protobuf (streaming) ms | protobuf / JSON |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    println!(
        "{}",
        measure::<ConfigMap>(&args, "ConfigMaps", cm_proto, &cm_bodies, args.configmaps)?
    );
    println!(
        "{}",
        measure::<Deployment>(
            &args,
            "Deployments (managedFields)",
            deploy_proto,
            &deploy_bodies,
            args.deployments
        )?
    );
    Ok(())
}
