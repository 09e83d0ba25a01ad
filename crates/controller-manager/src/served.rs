//! An informer on an API that not every supported server serves (EndpointSlices from 1.21,
//! admission policies from 1.30), started only once discovery shows the server serves it.
//!
//! kube-controller-manager does not start a controller whose resources its server lacks
//! (`controllerDescriptor.requiredFeatureGates` and the `available resources` check of
//! `cmd/kube-controller-manager/app/controllermanager.go`). The in-process manager starts every
//! controller against servers from 1.15 to today, so such a controller asks first and idles
//! when the answer is no.

use std::sync::Arc;
use std::time::Duration;

use kube_core::DynamicObject;
use kube_core::discovery::ApiResource;
use kubegen_cache::{ClientListWatch, InformerOptions, SharedIndexInformer, wait_for_cache_sync};
use kubegen_client::{
    CacheOptions, CachedDiscovery, Client, ListOptions, ResourceClient, RestMapper,
};

/// How long the informer may take to list.
const SYNC_TIMEOUT: Duration = Duration::from_secs(60);

/// A dynamic informer on `api` (listing with `list_options`), its handlers registered by
/// `register` before it starts, started and synced; with the discovery mapper that found it.
/// `None` when the server does not serve `api`: `controller` logs that it idles.
pub(crate) async fn served_informer(
    client: &Client,
    api: &ApiResource,
    list_options: ListOptions,
    controller: &str,
    register: impl FnOnce(&SharedIndexInformer<DynamicObject>),
) -> Option<(RestMapper, SharedIndexInformer<DynamicObject>)> {
    let mapper = RestMapper::new(Arc::new(CachedDiscovery::new(
        client.clone(),
        CacheOptions::default(),
    )));
    if mapper
        .mapping_for(&api.api_version, &api.kind)
        .await
        .is_err()
    {
        tracing::info!("{controller}: {} are not served; idle", api.plural);
        return None;
    }
    let list_watch = ClientListWatch::new(
        ResourceClient::<DynamicObject>::dynamic(client.clone(), api, None),
        list_options,
    );
    let mut options = InformerOptions::default();
    options.name = format!("{}.{}", api.plural, api.group);
    let informer = SharedIndexInformer::new(list_watch, options);
    register(&informer);
    informer.start();
    if let Err(e) = wait_for_cache_sync(SYNC_TIMEOUT, &[&informer]).await {
        tracing::warn!(error = %e, "{controller}: {} did not sync", api.plural);
    }
    Some((mapper, informer))
}
