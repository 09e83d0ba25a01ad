//! Informers and listers over resources known only at run time: a custom resource no code was
//! generated for, or every kind a garbage collector meets. Mirrors client-go `dynamic/
//! dynamicinformer` (`NewFilteredDynamicSharedInformerFactory`, `ForResource`) and
//! `dynamic/dynamiclister` (feature `client`).
//!
//! # How
//! The cache machinery is generic over any `K: Resource`; kube-core's `DynamicObject` is one
//! (its `ApiResource` says where it lives), and `kubegen_client::ResourceClient::dynamic` lists
//! and watches it as JSON. So a dynamic informer is the same [`SharedIndexInformer`] with the
//! same reflector, DeltaFIFO and indexer; [`DynamicLister`] is [`Lister<DynamicObject>`].
//!
//! # Differences from client-go
//! No separate factory: [`InformerFactory::dynamic_informer_for`] registers the informer in the
//! factory a controller already has (keyed by group, version and plural), so namespace,
//! selectors, resync, transforms and start / sync / shutdown are shared with the typed
//! informers. Per-type options for all dynamic informers are set for `DynamicObject`. Where
//! client-go takes a bare `GroupVersionResource` (and looks the scope up later), this takes a
//! `RestMapping`, which already says whether the resource is namespaced: a cluster-scoped
//! resource ignores the factory's namespace as a typed one does.

use std::any::TypeId;

use kube_core::DynamicObject;
use kubegen_client::{ResourceClient, RestMapping};

use crate::client_adapter::{ClientListWatch, ClientListWatchSource, selected};
use crate::factory::InformerFactory;
use crate::informer::SharedIndexInformer;
use crate::lister::Lister;

/// A lister over a dynamic informer's cache (client-go `dynamiclister.Lister`).
pub type DynamicLister = Lister<DynamicObject>;

impl InformerFactory<ClientListWatchSource> {
    /// The shared informer of the resource `mapping` names (from a
    /// [`RestMapper`](kubegen_client::RestMapper)), created on first request; start it with
    /// [`start`](Self::start) like any other.
    pub fn dynamic_informer_for(
        &self,
        mapping: &RestMapping,
    ) -> SharedIndexInformer<DynamicObject> {
        let resource = mapping.resource.clone();
        let name = format!("{}.{}", resource.plural, resource.api_version);
        let key = (TypeId::of::<DynamicObject>(), name.clone());
        self.shared_keyed(
            key,
            name,
            mapping.namespaced,
            move |source, namespace, selectors| {
                let client = ResourceClient::dynamic(source.client().clone(), &resource, namespace);
                ClientListWatch::new(client, selected(selectors))
            },
        )
    }
}

#[cfg(test)]
#[path = "dynamic_tests.rs"]
mod tests;
