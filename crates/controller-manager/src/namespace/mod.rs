//! `namespace-controller`: empties a terminating namespace, then removes its `kubernetes`
//! finalizer so the apiserver can delete it.
//!
//! Mirrors `pkg/controller/namespace/namespace_controller.go` (queue of namespace names fed by
//! the Namespace informer) and `deletion/namespaced_resources_deleter.go` (`Delete`): for a
//! namespace with `deletionTimestamp` and `kubernetes` in `spec.finalizers`, discover every
//! namespaced resource, delete its content, write the deletion conditions, and once nothing is
//! left `PUT /api/v1/namespaces/<name>/finalize` without `kubernetes`. The apiserver removes the
//! namespace when `spec.finalizers` and `metadata.finalizers` are both empty. Objects held by
//! finalizers keep the namespace: the controller looks again after a second (the real one waits
//! `estimate/2 + 1` seconds, which is one second without pods to drain).

mod deleter;

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kubegen_cache::{HandlerFns, Lister};
use kubegen_client::{Client, GetOptions, ResourceClient, UpdateOptions, discover};

use crate::Result;
use crate::context::{Context, Runner, stopped};
use crate::error::request;
use crate::worker::{self, Next};

use deleter::{Pass, conditions, delete_content};

/// The finalizer this controller owns (`v1.FinalizerKubernetes`).
const FINALIZER: &str = "kubernetes";

/// How long a namespace whose content is still going waits before the next pass.
const REMAINING_DELAY: Duration = Duration::from_secs(1);

/// Registers the Namespace handler; the runner works the queue until the manager stops.
pub(crate) fn start(context: &Context) -> Runner {
    let informer = context.factory.informer::<Namespace>();
    let queue = worker::queue::<String>("namespace");
    let enqueue = {
        let queue = queue.clone();
        move |ns: &Namespace| {
            if ns.metadata.deletion_timestamp.is_some()
                && let Some(name) = &ns.metadata.name
            {
                queue.add(name.clone());
            }
        }
    };
    let on_update = enqueue.clone();
    // Registering before the factory starts cannot fail (only a shut-down informer refuses).
    let _ = informer.add_event_handler(
        HandlerFns::new()
            .on_add(move |ns: &Arc<Namespace>, _| enqueue(ns))
            .on_update(move |_, ns: &Arc<Namespace>| on_update(ns)),
    );
    let lister = informer.lister();
    let client = context.client.clone();
    let workers = context.options.workers_or(10);
    let stop = context.stop.clone();
    Box::pin(async move {
        let sync = move |name: String| {
            let (client, lister) = (client.clone(), lister.clone());
            async move { sync(&client, &lister, &name).await }
        };
        let workers = worker::spawn(queue, workers, worker::Retries::Forever, sync);
        stopped(stop).await;
        workers.stop().await;
    })
}

/// One pass over namespace `name` (`namespaced_resources_deleter.go`'s `Delete`).
async fn sync(client: &Client, lister: &Lister<Namespace>, name: &str) -> Result<Next> {
    if lister.get(None, name).is_none() {
        return Ok(Next::Done);
    }
    let api = ResourceClient::<Namespace>::cluster(client.clone());
    let namespace = match api.get(name, &GetOptions::default()).await {
        Ok(ns) => ns,
        Err(e) if e.is_not_found() => return Ok(Next::Done),
        Err(e) => return Err(request(format!("get namespace {name}"))(e)),
    };
    if namespace.metadata.deletion_timestamp.is_none() || !holds_finalizer(&namespace) {
        return Ok(Next::Done);
    }
    let mut pass = Pass::default();
    let discovery = discover(client)
        .await
        .map_err(request("discover the served resources"))?;
    if !discovery.failed.is_empty() {
        let failed: Vec<String> = discovery
            .failed
            .iter()
            .map(|(group_version, e)| format!("{group_version}: {e}"))
            .collect();
        let message = format!(
            "unable to retrieve the complete list of server APIs: {}",
            failed.join(", ")
        );
        pass.discovery_error = Some(message);
    }
    delete_content(client, name, &discovery.resources, &mut pass).await;
    let namespace = write_conditions(&api, namespace, &pass).await?;
    if !pass.errors.is_empty() || pass.discovery_error.is_some() {
        return Err(crate::Error::InvalidObject {
            object: format!("namespace {name}"),
            reason: "its content could not all be deleted".into(),
        });
    }
    if !pass.done() {
        return Ok(Next::After(REMAINING_DELAY));
    }
    finalize(&api, namespace).await
}

fn holds_finalizer(namespace: &Namespace) -> bool {
    let spec = namespace.spec.as_ref();
    spec.and_then(|s| s.finalizers.as_ref())
        .is_some_and(|f| f.iter().any(|f| f == FINALIZER))
}

/// Writes the deletion conditions when they changed; returns the namespace as stored.
async fn write_conditions(
    api: &ResourceClient<Namespace>,
    mut namespace: Namespace,
    pass: &Pass,
) -> Result<Namespace> {
    let status = namespace.status.get_or_insert_with(Default::default);
    let previous = status.conditions.clone().unwrap_or_default();
    let now = Time(
        jiff::Timestamp::now()
            .round(jiff::Unit::Second)
            .unwrap_or_else(|_| jiff::Timestamp::now()),
    );
    let next = conditions(pass, &previous, &now);
    if next == previous {
        return Ok(namespace);
    }
    status.conditions = Some(next);
    let name = namespace.metadata.name.clone().unwrap_or_default();
    api.update_status(&namespace, &UpdateOptions::default())
        .await
        .map_err(request(format!("update the status of namespace {name}")))
}

/// `PUT .../finalize` without this controller's finalizer.
async fn finalize(api: &ResourceClient<Namespace>, mut namespace: Namespace) -> Result<Next> {
    let name = namespace.metadata.name.clone().unwrap_or_default();
    if let Some(spec) = namespace.spec.as_mut() {
        let kept = spec.finalizers.take().unwrap_or_default();
        spec.finalizers = Some(kept.into_iter().filter(|f| f != FINALIZER).collect());
    }
    let result: kubegen_client::Result<Namespace> = api
        .update_subresource(&name, "finalize", &namespace, &UpdateOptions::default())
        .await;
    match result {
        Ok(_) => Ok(Next::Done),
        Err(e) if e.is_not_found() => Ok(Next::Done),
        Err(e) => Err(request(format!("finalize namespace {name}"))(e)),
    }
}
