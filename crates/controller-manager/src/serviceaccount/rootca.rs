//! `root-ca-certificate-publisher-controller`: a ConfigMap `kube-root-ca.crt` with the cluster's
//! CA (`ca.crt`) in every active namespace, restored when changed or deleted. Mirrors
//! `pkg/controller/certificates/rootcacertpublisher/publisher.go`. Off by default here (see
//! [`ControllerManagerOptions`](crate::ControllerManagerOptions)).

use std::sync::Arc;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_cache::{HandlerFns, Lister};
use kubegen_client::{Client, CreateOptions, ResourceClient, UpdateOptions};

use super::active::active;
use crate::Result;
use crate::context::{Context, Runner, stopped};
use crate::error::request;
use crate::worker::{self, Next};

const NAME: &str = "kube-root-ca.crt";
const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/// Registers the handlers; the runner works the namespace queue until the manager stops.
pub(crate) fn start(context: &Context, pem: String) -> Runner {
    let namespaces = context.factory.informer::<Namespace>();
    let maps = context.factory.informer::<ConfigMap>();
    let queue = worker::queue::<String>("root_ca_cert_publisher");
    let (on_add, on_update) = (queue.clone(), queue.clone());
    let _ = namespaces.add_event_handler(
        HandlerFns::new()
            .on_add(move |ns: &Arc<Namespace>, _| {
                on_add.add(ns.metadata.name.clone().unwrap_or_default())
            })
            .on_update(move |_, ns: &Arc<Namespace>| {
                on_update.add(ns.metadata.name.clone().unwrap_or_default());
            }),
    );
    let (on_change, on_delete) = (queue.clone(), queue.clone());
    let _ = maps.add_event_handler(
        HandlerFns::new()
            .on_update(move |_, cm: &Arc<ConfigMap>| {
                if cm.metadata.name.as_deref() == Some(NAME) {
                    on_change.add(cm.metadata.namespace.clone().unwrap_or_default());
                }
            })
            .on_delete(move |deleted: &kubegen_cache::DeletedObject<ConfigMap>| {
                let cm = deleted.object();
                if cm.metadata.name.as_deref() == Some(NAME) {
                    on_delete.add(cm.metadata.namespace.clone().unwrap_or_default());
                }
            }),
    );
    let (namespaces, maps) = (namespaces.lister(), maps.lister());
    let client = context.client.clone();
    let stop = context.stop.clone();
    Box::pin(async move {
        let sync = move |name: String| {
            let (client, namespaces, maps, pem) = (
                client.clone(),
                namespaces.clone(),
                maps.clone(),
                pem.clone(),
            );
            async move { sync(&client, &namespaces, &maps, &pem, &name).await }
        };
        let workers = worker::spawn(queue, 1, worker::Retries::Forever, sync);
        stopped(stop).await;
        workers.stop().await;
    })
}

async fn sync(
    client: &Client,
    namespaces: &Lister<Namespace>,
    maps: &Lister<ConfigMap>,
    pem: &str,
    namespace: &str,
) -> Result<Next> {
    if !namespaces
        .get(None, namespace)
        .is_some_and(|ns| active(&ns))
    {
        return Ok(Next::Done);
    }
    let api = ResourceClient::<ConfigMap>::namespaced(client.clone(), namespace);
    let data = [("ca.crt".to_owned(), pem.to_owned())]
        .into_iter()
        .collect();
    let annotations = [(
        "kubernetes.io/description".to_owned(),
        DESCRIPTION.to_owned(),
    )];
    let result = match maps.get(Some(namespace), NAME) {
        None => {
            let map = ConfigMap {
                metadata: ObjectMeta {
                    name: Some(NAME.into()),
                    annotations: Some(annotations.into_iter().collect()),
                    ..ObjectMeta::default()
                },
                data: Some(data),
                ..ConfigMap::default()
            };
            api.create(&map, &CreateOptions::default()).await.map(drop)
        }
        Some(map) if map.data.as_ref() != Some(&data) => {
            let mut next = (*map).clone();
            next.data = Some(data);
            api.update(&next, &UpdateOptions::default()).await.map(drop)
        }
        Some(_) => Ok(()),
    };
    match result {
        Ok(()) => Ok(Next::Done),
        Err(e) if e.is_already_exists() || e.is_forbidden() || e.is_not_found() => Ok(Next::Done),
        Err(e) => Err(request(format!("publish {namespace}/{NAME}"))(e)),
    }
}
