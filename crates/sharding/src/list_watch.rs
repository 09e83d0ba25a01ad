//! The list-watch behind a shard's informer: its requests select only the shard's objects,
//! with the shard label or with the `shardSelector` of the shard's arcs of the ring.
//!
//! A label selector never changes for a shard. A `shardSelector` changes with the ring, and
//! a watch cannot change its selector: objects that enter the shard's arcs do not change, so
//! no event would bring them. So when the selector changes, the open watch ends with
//! [`ListWatchErrorKind::Expired`] and the reflector relists with the new selector (at its last
//! version, which the watch cache serves): the list's `Replace` adds the objects that came in
//! and deletes those that left. A watch about to open after a list made with an older
//! selector fails the same way. The pages of one list keep the selector of its first page.

use std::sync::Arc;

use kube_core::{ObjectList, WatchEvent};
use kubegen_cache::{
    ClientListWatch, ClientWatch, EventStream, InformerOptions, ListRequest, ListSelectors,
    ListWatch, ListWatchError, ListWatchErrorKind, SharedIndexInformer, WatchRequest,
};
use kubegen_client::{ApiObject, Client, ListOptions, ResourceClient};
use parking_lot::Mutex;
use tokio::sync::watch;

use crate::config::{ReplicaConfig, Selection};
use crate::selection::{Filter, ShardSelector};

/// An informer of the objects in `config`'s scope that no shard holds (label protocol).
pub(crate) fn unassigned_informer<K: ApiObject>(
    config: &ReplicaConfig,
    client: &Client,
) -> SharedIndexInformer<K> {
    let objects = config.objects::<K>(client.clone());
    let selector = config.scoped(config.ring.unassigned_selector());
    let mut options = InformerOptions::default();
    options.name = format!("unassigned:{}", config.identity);
    SharedIndexInformer::new(
        ClientListWatch::new(objects, ListOptions::default().labels(selector)),
        options,
    )
}

/// The list-watch of `config`'s shard under `filter`, in `namespace` (overriding the ring's
/// scope when a factory gives one) with `selectors` (a factory's) and the ring's `selector`.
pub(crate) fn shard_list_watch<K: ApiObject>(
    config: &ReplicaConfig,
    client: &Client,
    filter: &Arc<Filter>,
    namespace: Option<&str>,
    selectors: &ListSelectors,
) -> ShardListWatch<K> {
    let objects = match namespace.or(config.namespace.as_deref()) {
        Some(namespace) => ResourceClient::namespaced(client.clone(), namespace),
        None => ResourceClient::all_namespaces(client.clone()),
    };
    let mut base = ListOptions::default();
    base.field_selector.clone_from(&selectors.field_selector);
    let labels = [selectors.label_selector.clone(), config.selector.clone()];
    let labels: Vec<String> = labels
        .into_iter()
        .flatten()
        .filter(|l| !l.is_empty())
        .collect();
    if !labels.is_empty() {
        base.label_selector = Some(labels.join(","));
    }
    filter.probe_at(objects.collection_path());
    ShardListWatch::new(objects, base, config, Arc::clone(filter))
}

/// Lists and watches one shard's objects of a kind; see the module docs.
pub(crate) struct ShardListWatch<K> {
    objects: ResourceClient<K>,
    /// The scope's selectors (the ring's `selector`, a factory's tweaks).
    base: ListOptions,
    /// The shard's label selector (label protocol).
    shard_label: String,
    /// What a shard that owns nothing selects (server-side); None for a kind that follows its
    /// owners (dependents), which server-side selects every object.
    nothing: Option<String>,
    filter: Arc<Filter>,
    /// The generation and options of the last list (or streaming list) started.
    listed: Mutex<Option<(u64, ListOptions)>>,
}

impl<K> ShardListWatch<K> {
    /// Lists `objects` matching `base`, narrowed to the shard by `filter`'s decision:
    /// `shard_label` with labels, the current `shardSelector` (or `nothing`) server-side.
    pub(crate) fn new(
        objects: ResourceClient<K>,
        base: ListOptions,
        config: &ReplicaConfig,
        filter: Arc<Filter>,
    ) -> ShardListWatch<K> {
        ShardListWatch {
            objects,
            base,
            shard_label: config.ring.selector_for(&config.identity),
            nothing: Some(config.ring.nothing_selector()),
            filter,
            listed: Mutex::new(None),
        }
    }

    /// The list-watch of a kind that follows its owners' shard: labelled with this shard, or
    /// (server-side) every object matching `base`.
    pub(crate) fn following(
        objects: ResourceClient<K>,
        base: ListOptions,
        config: &ReplicaConfig,
        filter: Arc<Filter>,
    ) -> ShardListWatch<K> {
        ShardListWatch {
            nothing: None,
            ..ShardListWatch::new(objects, base, config, filter)
        }
    }

    /// `base` with `labels` added to its label selector.
    fn with_labels(&self, labels: &str) -> ListOptions {
        let mut options = self.base.clone();
        options.label_selector = Some(match options.label_selector.take() {
            Some(base) if !base.is_empty() => format!("{base},{labels}"),
            _ => labels.to_owned(),
        });
        options
    }

    /// The options a new list starts from, with their generation, remembered for its pages
    /// and the watch after it.
    async fn start_list(&self) -> ListOptions {
        let options = match (self.filter.decide().await, &self.nothing) {
            (Selection::ShardSelector, None) => self.base.clone(),
            (Selection::ShardSelector, Some(nothing)) => {
                let ShardSelector {
                    generation,
                    selector,
                } = self.filter.shard();
                let options = match selector {
                    Some(selector) => self.base.clone().shard_selector(selector),
                    None => self.with_labels(nothing),
                };
                *self.listed.lock() = Some((generation, options.clone()));
                return options;
            }
            (Selection::Auto | Selection::Labels, _) => self.with_labels(&self.shard_label),
        };
        *self.listed.lock() = Some((0, options.clone()));
        options
    }

    /// The options of the list in progress (a `continue` page), or of a new one.
    async fn list_options(&self, req: &ListRequest) -> ListOptions {
        if req.continue_token.is_some()
            && let Some((_, options)) = self.listed.lock().clone()
        {
            return options;
        }
        self.start_list().await
    }
}

impl<K: ApiObject> ListWatch<K> for ShardListWatch<K> {
    type Watch = ShardWatch<K>;

    async fn list(&self, req: &ListRequest) -> Result<ObjectList<K>, ListWatchError> {
        let options = self.list_options(req).await;
        ClientListWatch::new(self.objects.clone(), options)
            .list(req)
            .await
    }

    async fn list_each(
        &self,
        req: &ListRequest,
        each: impl FnMut(K) + Send,
    ) -> Result<ObjectList<K>, ListWatchError> {
        let options = self.list_options(req).await;
        ClientListWatch::new(self.objects.clone(), options)
            .list_each(req, each)
            .await
    }

    async fn watch(&self, req: &WatchRequest) -> Result<ShardWatch<K>, ListWatchError> {
        let options = if req.send_initial_events {
            self.start_list().await
        } else {
            self.filter.decide().await;
            let listed = self.listed.lock().clone();
            match listed {
                Some((generation, options)) if !self.stale(generation) => options,
                _ => return Err(selector_changed()),
            }
        };
        let generation = self.listed.lock().as_ref().map_or(0, |(g, _)| *g);
        let changes = self.filter.shard_changes();
        let stream = ClientListWatch::new(self.objects.clone(), options)
            .watch(req)
            .await?;
        Ok(ShardWatch {
            stream,
            changes: self.relists().then_some((changes, generation)),
        })
    }

    async fn serves_streaming_lists(&self) -> Option<bool> {
        ClientListWatch::new(self.objects.clone(), self.base.clone())
            .serves_streaming_lists()
            .await
    }
}

impl<K> ShardListWatch<K> {
    /// Whether this list-watch follows the `shardSelector` (and relists when it changes).
    fn relists(&self) -> bool {
        self.filter.server_side() && self.nothing.is_some()
    }

    /// Whether a list made at `generation` selected with an older `shardSelector`.
    fn stale(&self, generation: u64) -> bool {
        self.relists() && self.filter.shard().generation != generation
    }
}

/// What ends a watch whose selector is out of date: the reflector relists.
fn selector_changed() -> ListWatchError {
    ListWatchError::new(
        ListWatchErrorKind::Expired,
        "the shard's shardSelector changed: relisting",
    )
}

/// A watch of the shard's objects that ends when the server-side selector changes.
pub(crate) struct ShardWatch<K> {
    stream: ClientWatch<K>,
    /// Server-side: the selector's changes and the generation this watch selects with.
    changes: Option<(watch::Receiver<ShardSelector>, u64)>,
}

impl<K: ApiObject> EventStream<K> for ShardWatch<K> {
    async fn next_event(&mut self) -> Option<Result<WatchEvent<K>, ListWatchError>> {
        let Some((changes, generation)) = &mut self.changes else {
            return self.stream.next_event().await;
        };
        let generation = *generation;
        tokio::select! {
            event = self.stream.next_event() => event,
            Ok(_) = changes.wait_for(|s| s.generation != generation) => Some(Err(selector_changed())),
        }
    }
}
