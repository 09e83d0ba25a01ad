//! What a read of the cache costs in each store mode: `get` of one cached Deployment (p50/p99,
//! µs) and a `list` by label that returns 1,000 of them, over 10,000 Deployments that carry
//! `managedFields` as a v1.36 server writes them.
//!
//! The objects come from an in-memory list-watch (no server), so only the cache is measured.
//! Run it in release: `cargo run --release -p kubegen-cache --example read_cost`.
#![allow(clippy::unwrap_used)] // an example: failing loudly is fine

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use kube_core::{ListMeta, ObjectList, Selector, TypeMeta, WatchEvent};
use kubegen_cache::{
    EventStream, InformerOptions, ListRequest, ListWatch, ListWatchError, SharedIndexInformer,
    StoreMode, WatchRequest, WireCodec, wait_for_cache_sync,
};

const OBJECTS: usize = 10_000;
const PER_LABEL: usize = 1_000;

/// Lists every Deployment in one page; its watches never deliver anything.
struct InMemory(Vec<Deployment>);

struct Silent;

impl EventStream<Deployment> for Silent {
    async fn next_event(&mut self) -> Option<Result<WatchEvent<Deployment>, ListWatchError>> {
        std::future::pending().await
    }
}

impl ListWatch<Deployment> for InMemory {
    type Watch = Silent;

    async fn list(&self, _: &ListRequest) -> Result<ObjectList<Deployment>, ListWatchError> {
        Ok(ObjectList {
            types: TypeMeta {
                api_version: "apps/v1".into(),
                kind: "DeploymentList".into(),
            },
            metadata: ListMeta {
                resource_version: Some("1".into()),
                ..ListMeta::default()
            },
            items: self.0.clone(),
        })
    }

    async fn watch(&self, _: &WatchRequest) -> Result<Silent, ListWatchError> {
        Ok(Silent)
    }

    fn wire_codec(&self) -> Option<WireCodec<Deployment>> {
        Some(WireCodec::json())
    }
}

/// Deployment `i`, labelled `group=g<i / PER_LABEL>`, with the managedFields of a client-side
/// apply and of the controller-manager's status updates.
fn deployment(i: usize) -> Deployment {
    serde_json::from_value(serde_json::json!({
        "metadata": {
            "name": format!("web-{i:05}"), "namespace": "bench", "uid": format!("00000000-0000-0000-0000-{i:012}"),
            "resourceVersion": format!("{}", 1000 + i), "generation": 1,
            "creationTimestamp": "2026-11-28T10:00:00Z",
            "labels": {"app": "web", "group": format!("g{}", i / PER_LABEL)},
            "annotations": {"deployment.kubernetes.io/revision": "1"},
            "managedFields": [
                {"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "apps/v1",
                 "time": "2026-11-28T10:00:00Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:group": {}}},
                              "f:spec": {"f:progressDeadlineSeconds": {}, "f:replicas": {}, "f:revisionHistoryLimit": {},
                                         "f:selector": {}, "f:strategy": {"f:rollingUpdate": {".": {}, "f:maxSurge": {}, "f:maxUnavailable": {}}, "f:type": {}},
                                         "f:template": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                                                        "f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {}, "f:resources": {}, "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {}}},
                                                                   "f:dnsPolicy": {}, "f:restartPolicy": {}, "f:schedulerName": {}, "f:securityContext": {}, "f:terminationGracePeriodSeconds": {}}}}}},
                {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "apps/v1",
                 "time": "2026-11-28T10:00:01Z", "fieldsType": "FieldsV1", "subresource": "status",
                 "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:deployment.kubernetes.io/revision": {}}},
                              "f:status": {"f:conditions": {".": {}, "k:{\"type\":\"Available\"}": {".": {}, "f:lastTransitionTime": {}, "f:lastUpdateTime": {}, "f:message": {}, "f:reason": {}, "f:status": {}, "f:type": {}},
                                                            "k:{\"type\":\"Progressing\"}": {".": {}, "f:lastTransitionTime": {}, "f:lastUpdateTime": {}, "f:message": {}, "f:reason": {}, "f:status": {}, "f:type": {}}},
                                           "f:observedGeneration": {}, "f:replicas": {}, "f:unavailableReplicas": {}, "f:updatedReplicas": {}}}}
            ]
        },
        "spec": {
            "replicas": 1, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "registry.example/web:1.0", "imagePullPolicy": "IfNotPresent",
                                         "resources": {}, "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}],
                         "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                         "securityContext": {}, "schedulerName": "default-scheduler"}
            }
        },
        "status": {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "unavailableReplicas": 1,
                   "conditions": [
                       {"type": "Available", "status": "False", "lastUpdateTime": "2026-11-28T10:00:01Z", "lastTransitionTime": "2026-11-28T10:00:01Z",
                        "reason": "MinimumReplicasUnavailable", "message": "Deployment does not have minimum availability."},
                       {"type": "Progressing", "status": "True", "lastUpdateTime": "2026-11-28T10:00:01Z", "lastTransitionTime": "2026-11-28T10:00:01Z",
                        "reason": "ReplicaSetUpdated", "message": "ReplicaSet \"web-5d4b\" is progressing."}]}
    }))
    .unwrap()
}

/// p50 and p99 of `samples`, in µs.
fn percentiles(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e6;
    (at(0.50), at(0.99))
}

/// Times `f` `runs` times.
fn timed(runs: usize, mut f: impl FnMut(usize)) -> Vec<Duration> {
    (0..runs)
        .map(|i| {
            let start = Instant::now();
            f(i);
            start.elapsed()
        })
        .collect()
}

async fn measure(mode: StoreMode, objects: &[Deployment]) {
    let mut options = InformerOptions::default();
    options.store_mode = mode;
    options.streaming_list = false;
    let informer = SharedIndexInformer::new(InMemory(objects.to_vec()), options);
    informer.start();
    wait_for_cache_sync(Duration::from_secs(60), &[&informer])
        .await
        .unwrap();
    let lister = informer.lister();
    // A stride through the keys, so that consecutive gets miss the recently decoded objects.
    let key = |i: usize| format!("web-{:05}", (i * 7919) % OBJECTS);
    let (get50, get99) = percentiles(timed(20_000, |i| {
        assert!(lister.get(Some("bench"), &key(i)).is_some());
    }));
    // A reconcile reading one object twice: only the second read is timed.
    let mut second = Vec::with_capacity(20_000);
    for i in 0..20_000 {
        assert!(lister.get(Some("bench"), &key(i)).is_some());
        second.extend(timed(1, |_| {
            assert!(lister.get(Some("bench"), &key(i)).is_some());
        }));
    }
    let (again50, again99) = percentiles(second);
    let group: Selector = [("group", "g3")].into_iter().collect();
    let (list50, list99) = percentiles(timed(50, |_| {
        assert_eq!(lister.list(&group).len(), PER_LABEL);
    }));
    println!(
        "| {mode:?} | {get50:.1} / {get99:.1} | {again50:.1} / {again99:.1} | {:.0} / {:.0} |",
        list50, list99
    );
    informer.shutdown();
}

#[tokio::main]
async fn main() {
    let objects: Vec<Deployment> = (0..OBJECTS).map(deployment).collect();
    let json = serde_json::to_vec(&objects[0]).unwrap().len();
    println!("{OBJECTS} Deployments of {json} bytes of JSON each, {PER_LABEL} per `group` label\n");
    println!(
        "| store | get µs p50 / p99 | second get of an object µs p50 / p99 | list 1k by label µs p50 / p99 |"
    );
    println!("|---|---:|---:|---:|");
    measure(StoreMode::Decoded, &objects).await;
    measure(StoreMode::bytes(), &objects).await;
}
