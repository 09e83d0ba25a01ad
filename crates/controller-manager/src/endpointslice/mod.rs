//! `endpointslice-controller`: the EndpointSlices of every Service with a selector, from the Pods
//! it selects. Mirrors `pkg/controller/endpointslice/endpointslice_controller.go` (a queue of
//! Service keys fed by Service, Pod and EndpointSlice changes; `syncService`) and the reconciler
//! of `staging/src/k8s.io/endpointslice` (what a slice holds: `desired.rs`).
//!
//! # Why
//! An operator that waits for its Service to have ready endpoints (or a test of one) needs them
//! to appear as the simulated Pods become ready, as on a cluster.
//!
//! # One sync
//! 1. A Service that is gone, `ExternalName`, or without a selector is left alone (its slices go
//!    with it through their owner reference; a selectorless Service's slices are its owner's).
//! 2. The desired slices are computed from the selected Pods (`desired.rs`).
//! 3. The Service's slices (labels `kubernetes.io/service-name` and
//!    `endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io`) are updated in
//!    place, one per desired slice, keeping the order of the endpoints they already hold; the
//!    missing ones are created (`generateName: <service>-`, controller reference to the Service),
//!    the extra ones deleted. A changed slice gets `endpoints.kubernetes.io/last-change-trigger-time`.
//!
//! # Differences from v1.36
//! The trigger time is the time of the write, where the real tracker keeps the time of the
//! oldest change not yet written; endpoints carry no `zone` (no Node informer here); slices are
//! filled in the order the Pods are listed rather than packed to save writes. IPv4 only.
//!
//! # Served from 1.21
//! On a server without `discovery.k8s.io/v1`, the controller finds it missing from discovery
//! and does nothing.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `desired`

mod desired;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Pod, Service};
use kube_core::discovery::ApiResource;
use kube_core::{DynamicObject, Selector, SelectorExt};
use kubegen_cache::{DeletedObject, HandlerFns, Lister, SharedIndexInformer};
use kubegen_client::{
    Client, CreateOptions, DeleteOptions, ListOptions, ResourceClient, UpdateOptions,
};
use kubegen_workqueue::RateLimitingQueue;
use serde_json::{Value, json};

use crate::Result;
use crate::context::{Context, Runner, stopped};
use crate::error::request;
use crate::served::served_informer;
use crate::worker::{self, Next};
use crate::workload::meta::key_of;

use desired::{CONTROLLER_NAME, MANAGED_BY_LABEL, SERVICE_NAME_LABEL, Slice};

/// When the change a slice's content reflects happened.
const TRIGGER_TIME: &str = "endpoints.kubernetes.io/last-change-trigger-time";

/// The EndpointSlices' API.
fn slices_api() -> ApiResource {
    ApiResource {
        group: "discovery.k8s.io".into(),
        version: "v1".into(),
        api_version: "discovery.k8s.io/v1".into(),
        kind: "EndpointSlice".into(),
        plural: "endpointslices".into(),
    }
}

/// Registers the Service and Pod handlers; the runner waits for discovery to serve
/// EndpointSlices, then works the queue until the manager stops
/// (`--concurrent-service-endpoint-syncs`, 5).
pub(crate) fn start(context: &Context) -> Runner {
    let services = context.factory.informer::<Service>();
    let pods = context.factory.informer::<Pod>();
    let queue = worker::queue::<String>("endpoint_slice");
    let (on_add, on_update, on_delete) = (queue.clone(), queue.clone(), queue.clone());
    let _ = services.add_event_handler(
        HandlerFns::new()
            .on_add(move |service: &Arc<Service>, _| on_add.add(key_of(service.as_ref())))
            .on_update(move |_, service: &Arc<Service>| on_update.add(key_of(service.as_ref())))
            .on_delete(move |gone: &DeletedObject<Service>| {
                on_delete.add(key_of(gone.object().as_ref()));
            }),
    );
    let service_lister = services.lister();
    let enqueue = {
        let (queue, services) = (queue.clone(), service_lister.clone());
        Arc::new(move |pod: &Pod| {
            for key in services_of(&services, pod) {
                queue.add(key);
            }
        })
    };
    let (on_add, on_update, on_delete) = (enqueue.clone(), enqueue.clone(), enqueue);
    let _ = pods.add_event_handler(
        HandlerFns::new()
            .on_add(move |pod: &Arc<Pod>, _| on_add(pod))
            .on_update(move |old: &Arc<Pod>, new: &Arc<Pod>| {
                on_update(old);
                on_update(new);
            })
            .on_delete(move |gone: &DeletedObject<Pod>| on_delete(gone.object())),
    );
    let client = context.client.clone();
    let workers = context.options.workers_or(5);
    let stop = context.stop.clone();
    let pods = pods.lister();
    Box::pin(async move {
        let selector = format!("{MANAGED_BY_LABEL}={CONTROLLER_NAME}");
        let Some((_, slices)) = served_informer(
            &client,
            &slices_api(),
            ListOptions::default().labels(&selector),
            "endpointslice-controller",
            |slices| enqueue_owners(slices, &queue),
        )
        .await
        else {
            stopped(stop).await;
            return;
        };
        let shared = Arc::new(Shared {
            client,
            services: service_lister,
            pods,
            slices: slices.lister(),
        });
        let workers = worker::spawn(queue, workers, worker::Retries::Forever, move |key| {
            let shared = Arc::clone(&shared);
            async move { sync(&shared, &key).await }
        });
        stopped(stop).await;
        workers.stop().await;
        let _ = slices.shutdown_and_wait(Duration::from_secs(5)).await;
    })
}

/// Registers the handlers of the informer of the slices this controller manages: a change to one
/// (a user's edit, a delete) enqueues its Service.
fn enqueue_owners(slices: &SharedIndexInformer<DynamicObject>, queue: &RateLimitingQueue<String>) {
    let (on_add, on_update, on_delete) = (queue.clone(), queue.clone(), queue.clone());
    let _ = slices.add_event_handler(
        HandlerFns::new()
            .on_add(move |slice: &Arc<DynamicObject>, _| enqueue_owner(&on_add, slice))
            .on_update(move |_, slice: &Arc<DynamicObject>| enqueue_owner(&on_update, slice))
            .on_delete(move |gone: &DeletedObject<DynamicObject>| {
                enqueue_owner(&on_delete, gone.object());
            }),
    );
}

/// Enqueues the Service a slice belongs to (its `kubernetes.io/service-name` label).
fn enqueue_owner(queue: &RateLimitingQueue<String>, slice: &DynamicObject) {
    let service = slice
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(SERVICE_NAME_LABEL));
    if let Some(service) = service {
        let namespace = slice.metadata.namespace.as_deref().unwrap_or_default();
        queue.add(format!("{namespace}/{service}"));
    }
}

/// The keys of the Services in `pod`'s namespace whose selector picks it (`GetPodServiceMemberships`).
fn services_of(services: &Lister<Service>, pod: &Pod) -> Vec<String> {
    let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
    services
        .namespaced(namespace)
        .list(&Selector::default())
        .into_iter()
        .filter(|service| {
            let selector = service.spec.as_ref().and_then(|s| s.selector.clone());
            let labels = pod.metadata.labels.clone().unwrap_or_default();
            selector.is_some_and(|s| Selector::from_iter(s).matches(&labels))
        })
        .map(|service| key_of(service.as_ref()))
        .collect()
}

/// What every sync reads.
struct Shared {
    client: Client,
    services: Lister<Service>,
    pods: Lister<Pod>,
    slices: Lister<DynamicObject>,
}

/// Brings Service `key`'s slices in line with its Pods (`syncService`, `Reconcile`).
async fn sync(shared: &Shared, key: &str) -> Result<Next> {
    let (namespace, name) = key.split_once('/').unwrap_or(("", key));
    let Some(service) = shared.services.get(Some(namespace), name) else {
        return Ok(Next::Done);
    };
    let spec = service.spec.clone().unwrap_or_default();
    let Some(selector) = spec.selector.as_ref() else {
        return Ok(Next::Done);
    };
    if spec.type_.as_deref() == Some("ExternalName") {
        return Ok(Next::Done);
    }
    let pods = shared
        .pods
        .namespaced(namespace)
        .list(&Selector::from_iter(selector.clone()));
    let selected: Vec<&Pod> = pods.iter().map(AsRef::as_ref).collect();
    let wanted = desired::slices(&service, &selected);
    let mut existing: Vec<Arc<DynamicObject>> = shared
        .slices
        .namespaced(namespace)
        .list(&Selector::default())
        .into_iter()
        .filter(|slice| {
            let labels = slice.metadata.labels.as_ref();
            labels
                .and_then(|l| l.get(SERVICE_NAME_LABEL))
                .map(String::as_str)
                == Some(name)
                && slice.metadata.deletion_timestamp.is_none()
        })
        .collect();
    existing.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let api = ResourceClient::<DynamicObject>::dynamic(
        shared.client.clone(),
        &slices_api(),
        Some(namespace),
    );
    let labels = desired::labels(&service);
    let mut unused: Vec<Arc<DynamicObject>> = existing;
    for slice in wanted {
        // The slice already holding the most of these endpoints, else any left, else a new one.
        let reuse = best_match(&unused, &slice);
        match reuse {
            Some(index) => {
                let current = unused.remove(index);
                update(&api, &current, slice, &labels).await?;
            }
            None => create(&api, &service, slice, &labels).await?,
        }
    }
    for extra in unused {
        let name = extra.metadata.name.clone().unwrap_or_default();
        match api.delete(&name, &DeleteOptions::default()).await {
            Ok(_) => {}
            Err(e) if e.is_not_found() => {}
            Err(e) => {
                return Err(request(format!("delete endpointslice {namespace}/{name}"))(
                    e,
                ));
            }
        }
    }
    Ok(Next::Done)
}

/// The index in `slices` of the one sharing the most endpoints with `wanted` (by target Pod),
/// else of the first; `None` when there is none.
fn best_match(slices: &[Arc<DynamicObject>], wanted: &Slice) -> Option<usize> {
    let targets = |endpoints: &[Value]| -> Vec<Value> {
        endpoints
            .iter()
            .map(|e| e["targetRef"]["uid"].clone())
            .collect()
    };
    let wanted_targets = targets(&wanted.endpoints);
    let shared = |slice: &DynamicObject| {
        let held = slice.data["endpoints"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        targets(&held)
            .iter()
            .filter(|uid| wanted_targets.contains(uid))
            .count()
    };
    (0..slices.len()).max_by_key(|&i| (shared(&slices[i]), std::cmp::Reverse(i)))
}

/// `wanted`'s endpoints in the order `held` has them, new ones after.
fn keep_order(held: &Value, wanted: Vec<Value>) -> Vec<Value> {
    let held = held.as_array().cloned().unwrap_or_default();
    let uid = |e: &Value| e["targetRef"]["uid"].clone();
    let mut ordered: Vec<Value> = held
        .iter()
        .filter_map(|old| wanted.iter().find(|new| uid(new) == uid(old)).cloned())
        .collect();
    for endpoint in wanted {
        if !ordered.iter().any(|e| uid(e) == uid(&endpoint)) {
            ordered.push(endpoint);
        }
    }
    ordered
}

/// The `endpoints` field of a slice: `null` when it has none, as Go writes an empty slice.
fn endpoints_value(endpoints: Vec<Value>) -> Value {
    match endpoints.is_empty() {
        true => Value::Null,
        false => Value::Array(endpoints),
    }
}

fn now() -> String {
    k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

async fn update(
    api: &ResourceClient<DynamicObject>,
    current: &DynamicObject,
    slice: Slice,
    labels: &BTreeMap<String, String>,
) -> Result<()> {
    let endpoints = endpoints_value(keep_order(&current.data["endpoints"], slice.endpoints));
    let same_content =
        current.data["endpoints"] == endpoints && current.data["ports"] == slice.ports;
    let same_labels = current.metadata.labels.as_ref() == Some(labels);
    if same_content && same_labels {
        return Ok(());
    }
    let mut next = current.clone();
    next.data["endpoints"] = endpoints;
    next.data["ports"] = slice.ports;
    next.metadata.labels = Some(labels.clone());
    if !same_content {
        next.metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .insert(TRIGGER_TIME.into(), now());
    }
    let name = current.metadata.name.clone().unwrap_or_default();
    match api.update(&next, &UpdateOptions::default()).await {
        Ok(_) => Ok(()),
        // Changed or gone meanwhile: the informer's event brings the Service back.
        Err(e) if e.is_conflict() || e.is_not_found() => Ok(()),
        Err(e) => Err(request(format!("update endpointslice {name}"))(e)),
    }
}

async fn create(
    api: &ResourceClient<DynamicObject>,
    service: &Service,
    slice: Slice,
    labels: &BTreeMap<String, String>,
) -> Result<()> {
    let name = service.metadata.name.as_deref().unwrap_or_default();
    let object = json!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "generateName": format!("{name}-"),
            "labels": labels,
            "annotations": {TRIGGER_TIME: now()},
            "ownerReferences": [{
                "apiVersion": "v1",
                "kind": "Service",
                "name": name,
                "uid": service.metadata.uid.as_deref().unwrap_or_default(),
                "controller": true,
                "blockOwnerDeletion": true,
            }],
        },
        "addressType": "IPv4",
        "endpoints": endpoints_value(slice.endpoints),
        "ports": slice.ports,
    });
    let object: DynamicObject =
        serde_json::from_value(object).map_err(|e| crate::Error::InvalidObject {
            object: format!("endpointslice for service {name}"),
            reason: e.to_string(),
        })?;
    match api.create(&object, &CreateOptions::default()).await {
        Ok(_) => Ok(()),
        // The namespace is terminating: its Services go too.
        Err(e) if e.is_forbidden() => Ok(()),
        Err(e) => Err(request(format!("create endpointslice for service {name}"))(
            e,
        )),
    }
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
