//! [`ListWatch`] over `kubegen_client::ResourceClient` (feature `client`), for whole objects
//! ([`ListWatchSource`]) and for metadata only ([`MetadataListWatchSource`]).
//!
//! Mirrors client-go `tools/cache/listwatch.go` (`NewFilteredListWatchFromClient`): the
//! generated informers' factory builds one of these per type through [`ClientListWatchSource`],
//! and this file is the only place where the cache meets HTTP.

use std::future::Future;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kube_core::metadata::PartialObjectMeta;
use kube_core::{ObjectList, WatchEvent};
use kubegen_client::{
    AnyObject, ApiObject, Client, ListOptions, ObjectHead, ResourceClient, ResourceVersionMatch,
    WatchStream, WireObject,
};
use serde::de::DeserializeOwned;

use crate::factory::{ListSelectors, ListWatchSource};
use crate::list_watch::{
    EventStream, EventWithBytes, ListRequest, ListWatch, ListWatchError, ListWatchErrorKind,
    WatchRequest,
};
use crate::metadata::MetadataListWatchSource;
use crate::store_mode::{WireBytes, WireCodec, WireItem};

/// The [`ListWatchSource`] of a real controller: every informer of an
/// [`InformerFactory`](crate::InformerFactory) lists and watches through one [`Client`].
#[derive(Clone)]
pub struct ClientListWatchSource {
    client: Client,
}

impl ClientListWatchSource {
    /// Builds each type's [`ClientListWatch`] over `client`.
    pub fn new(client: Client) -> Self {
        Self { client }
    }

    /// The client every list and watch goes through.
    pub(crate) fn client(&self) -> &Client {
        &self.client
    }
}

impl<K: ApiObject> ListWatchSource<K> for ClientListWatchSource {
    type ListWatch = ClientListWatch<K>;

    fn list_watch(&self, namespace: Option<&str>, selectors: &ListSelectors) -> ClientListWatch<K> {
        let client = self.client.clone();
        // A cluster-scoped kind comes with `None` and has the same collection path as "all
        // namespaces".
        let resources = match namespace {
            Some(ns) => ResourceClient::namespaced(client, ns),
            None => ResourceClient::all_namespaces(client),
        };
        ClientListWatch::new(resources, selected(selectors))
    }
}

impl<K: ApiObject> MetadataListWatchSource<K> for ClientListWatchSource {
    type ListWatch = ClientListWatch<PartialObjectMeta<K>>;

    fn metadata_list_watch(
        &self,
        namespace: Option<&str>,
        selectors: &ListSelectors,
    ) -> Self::ListWatch {
        let client = self.client.clone();
        let resources = match namespace {
            Some(ns) => ResourceClient::metadata_namespaced(client, ns),
            None => ResourceClient::metadata_all_namespaces(client),
        };
        ClientListWatch::new(resources, selected(selectors))
    }
}

/// The list options every request of an informer with `selectors` starts from.
pub(crate) fn selected(selectors: &ListSelectors) -> ListOptions {
    let mut base = ListOptions::default();
    base.label_selector.clone_from(&selectors.label_selector);
    base.field_selector.clone_from(&selectors.field_selector);
    base
}

/// Lists and watches through a [`ResourceClient`], with fixed label/field selectors.
pub struct ClientListWatch<K> {
    client: ResourceClient<K>,
    /// Selectors (and anything else) every request starts from.
    base: ListOptions,
}

impl<K> ClientListWatch<K> {
    /// Lists and watches what `client` addresses (a namespace, all namespaces or the cluster),
    /// restricted by `base`'s `label_selector` and `field_selector`. Paging, resourceVersion
    /// and timeout fields of `base` are overwritten per request.
    pub fn new(client: ResourceClient<K>, base: ListOptions) -> Self {
        Self { client, base }
    }

    /// The query of the LIST `req` asks for.
    fn list_options(&self, req: &ListRequest) -> ListOptions {
        let mut opts = self.base.clone();
        opts.resource_version = non_empty(&req.resource_version);
        opts.resource_version_match = None;
        opts.limit = req.limit;
        opts.continue_token = req.continue_token.clone();
        opts
    }
}

/// Maps a client error onto what the reflector decides on.
///
/// A watch body that breaks ([`Error::WatchInterrupted`](kubegen_client::Error::WatchInterrupted))
/// or goes silent ([`Error::WatchIdle`](kubegen_client::Error::WatchIdle)) is
/// [`Interrupted`](ListWatchErrorKind::Interrupted): re-watch from the last resourceVersion. A
/// malformed event ([`Error::WatchDecode`](kubegen_client::Error::WatchDecode)) stays `Other`:
/// the server sent something we cannot apply, so back off and relist.
///
/// The client error becomes the [`source`](std::error::Error::source) and its `Status` (if the
/// server sent one) the [`ListWatchError::status`], so a watch-error handler sees both.
pub fn classify(err: kubegen_client::Error) -> ListWatchError {
    use kubegen_client::Error;
    let kind = if err.is_gone() {
        ListWatchErrorKind::Expired
    } else if err.is_resource_version_too_large() {
        ListWatchErrorKind::ResourceVersionTooLarge
    } else if err.is_too_many_requests() {
        ListWatchErrorKind::TooManyRequests
    } else if err.is_connect() {
        ListWatchErrorKind::Unavailable
    } else if matches!(
        err,
        Error::WatchInterrupted { .. } | Error::WatchIdle { .. }
    ) {
        ListWatchErrorKind::Interrupted
    } else if matches!(err.code(), Some(400 | 422)) {
        ListWatchErrorKind::Invalid
    } else {
        ListWatchErrorKind::Other
    };
    let retry_after = err.retry_after();
    let status = err.status().cloned();
    ListWatchError::from_source(kind, err)
        .with_retry_after(retry_after)
        .with_status(status)
}

/// `""` means "no resourceVersion parameter" (a consistent read / watch from now).
fn non_empty(rv: &str) -> Option<String> {
    (!rv.is_empty()).then(|| rv.to_owned())
}

/// For every object type the client reads, typed or dynamic: `ClientListWatch::new(
/// ResourceClient::dynamic_metadata(client, &resource, None), base)` feeds a metadata-only
/// informer of a resource found by discovery (what the garbage collector's monitors are).
impl<K> ListWatch<K> for ClientListWatch<K>
where
    K: AnyObject,
{
    type Watch = ClientWatch<K>;

    fn list(
        &self,
        req: &ListRequest,
    ) -> impl Future<Output = Result<ObjectList<K>, ListWatchError>> + Send {
        let opts = self.list_options(req);
        async move { self.client.list(&opts).await.map_err(classify) }
    }

    fn list_each(
        &self,
        req: &ListRequest,
        each: impl FnMut(K) + Send,
    ) -> impl Future<Output = Result<ObjectList<K>, ListWatchError>> + Send {
        let opts = self.list_options(req);
        async move { self.client.list_each(&opts, each).await.map_err(classify) }
    }

    fn list_each_with_bytes(
        &self,
        req: &ListRequest,
        mut each: impl FnMut(K, Option<WireBytes>) + Send,
    ) -> impl Future<Output = Result<ObjectList<K>, ListWatchError>> + Send {
        let opts = self.list_options(req);
        async move {
            self.client
                .list_each_with_bytes(&opts, |obj, wire| each(obj, Some(wire_bytes(wire))))
                .await
                .map_err(classify)
        }
    }

    /// Each item is decoded as a `kubegen_client::ObjectHead` (its name, namespace,
    /// resourceVersion and labels; the rest skipped), not in full.
    fn hands_out_wire_items(&self) -> bool {
        true
    }

    fn list_each_wire(
        &self,
        req: &ListRequest,
        mut each: impl FnMut(WireItem) + Send,
    ) -> impl Future<Output = Result<ListMeta, ListWatchError>> + Send {
        let opts = self.list_options(req);
        async move {
            self.client
                .list_each_head_with_bytes(&opts, |head, wire| each(wire_item(head, wire)))
                .await
                .map_err(classify)
        }
    }

    fn watch(
        &self,
        req: &WatchRequest,
    ) -> impl Future<Output = Result<ClientWatch<K>, ListWatchError>> + Send {
        let mut opts = self.base.clone();
        opts.limit = None;
        opts.continue_token = None;
        opts.resource_version = non_empty(&req.resource_version);
        opts.timeout_seconds = Some(req.timeout_seconds);
        opts.allow_watch_bookmarks = req.allow_watch_bookmarks;
        if req.send_initial_events {
            opts.send_initial_events = Some(true);
            opts.resource_version_match = Some(ResourceVersionMatch::NotOlderThan);
        }
        async move {
            let stream = self.client.watch(&opts).await.map_err(classify)?;
            Ok(ClientWatch(stream))
        }
    }

    /// JSON (every object the client reads has serde implementations that round-trip it), and
    /// the client's protobuf decoder for the protobuf messages of built-in kinds.
    fn wire_codec(&self) -> Option<WireCodec<K>> {
        let decoder = self.client.wire_decoder();
        let codec = WireCodec::json()
            .with_protobuf(move |bytes| decoder.decode_protobuf(bytes).map_err(Into::into));
        Some(codec)
    }

    /// Asks the server's `/version`: `sendInitialEvents` exists from 1.27 on (a server with the
    /// WatchList feature off rejects it with 422, which the reflector handles); an older one
    /// ignores it. No answer, or one that does not parse, is "unknown".
    async fn serves_streaming_lists(&self) -> Option<bool> {
        let request = http::Request::get("/version")
            .body(bytes::Bytes::new())
            .ok()?;
        let version: ServerVersion = self.client.client().request_json(request).await.ok()?;
        Some(version.minor()? >= FIRST_STREAMING_MINOR)
    }
}

/// The first Kubernetes 1.x minor that knows `sendInitialEvents` (KEP-3157, alpha in 1.27).
const FIRST_STREAMING_MINOR: u32 = 27;

/// The part of `/version` (`version.Info`) the streaming-list decision reads.
#[derive(serde::Deserialize)]
struct ServerVersion {
    #[serde(default)]
    major: String,
    #[serde(default)]
    minor: String,
}

impl ServerVersion {
    /// The 1.x minor version (`"27+"`, as some distributions write it, reads 27); `None` for
    /// another major or an unparsable answer.
    fn minor(&self) -> Option<u32> {
        let major: u32 = self.major.trim_end_matches('+').parse().ok()?;
        let minor: u32 = self.minor.trim_end_matches('+').parse().ok()?;
        (major == 1).then_some(minor)
    }
}

/// The events of a watch opened by [`ClientListWatch`].
pub struct ClientWatch<K>(WatchStream<K>);

impl<K> EventStream<K> for ClientWatch<K>
where
    K: DeserializeOwned + Send + 'static,
{
    async fn next_event(&mut self) -> Option<Result<WatchEvent<K>, ListWatchError>> {
        self.0.next().await.map(|r| r.map_err(classify))
    }

    async fn next_event_with_bytes(&mut self) -> Option<Result<EventWithBytes<K>, ListWatchError>> {
        let next = self.0.next_with_bytes().await?;
        Some(
            next.map(|(event, wire)| (event, wire.map(wire_bytes)))
                .map_err(classify),
        )
    }

    async fn next_wire_event(&mut self) -> Option<Result<WatchEvent<WireItem>, ListWatchError>> {
        let (event, wire) = match self.0.next_head_with_bytes().await? {
            Ok(next) => next,
            Err(err) => return Some(Err(classify(err))),
        };
        let object = |head| match wire {
            Some(wire) => Ok(wire_item(head, wire)),
            None => Err(ListWatchError::new(
                ListWatchErrorKind::Other,
                "a watch event's object came without its bytes",
            )),
        };
        Some(match event {
            WatchEvent::Added(head) => object(head).map(WatchEvent::Added),
            WatchEvent::Modified(head) => object(head).map(WatchEvent::Modified),
            WatchEvent::Deleted(head) => object(head).map(WatchEvent::Deleted),
            WatchEvent::Bookmark(bookmark) => Ok(WatchEvent::Bookmark(bookmark)),
            WatchEvent::Error(status) => Ok(WatchEvent::Error(status)),
        })
    }
}

/// The cache's wire item of an object the client read as `head` and `wire`.
fn wire_item(head: ObjectHead, wire: WireObject) -> WireItem {
    let meta = head.metadata;
    WireItem {
        namespace: meta.namespace,
        name: meta.name.unwrap_or_default(),
        resource_version: meta.resource_version.unwrap_or_default(),
        labels: meta.labels.unwrap_or_default(),
        bytes: wire_bytes(wire),
    }
}

/// The cache's name for the client's bytes of one object.
fn wire_bytes(wire: WireObject) -> WireBytes {
    match wire {
        WireObject::Json(bytes) => WireBytes::Json(bytes),
        WireObject::Protobuf(bytes) => WireBytes::Protobuf(bytes),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use kubegen_client::Error;

    use super::*;

    #[test]
    fn broken_or_silent_watch_streams_are_interrupted_but_malformed_events_are_not() {
        let url = "/api/v1/configmaps?watch=true".to_owned();
        let broken = Error::WatchInterrupted {
            url: url.clone(),
            message: "connection reset by peer".into(),
        };
        let idle = Error::WatchIdle {
            url: url.clone(),
            after: Duration::from_secs(330),
        };
        let malformed = Error::WatchDecode {
            url: url.clone(),
            line: 3,
            excerpt: "garbage".into(),
            source: serde_json::from_str::<u8>("garbage").unwrap_err(),
        };
        let refused = Error::Connect {
            url,
            message: "connection refused".into(),
        };
        assert_eq!(classify(broken).kind(), ListWatchErrorKind::Interrupted);
        assert_eq!(classify(idle).kind(), ListWatchErrorKind::Interrupted);
        assert_eq!(classify(malformed).kind(), ListWatchErrorKind::Other);
        assert_eq!(classify(refused).kind(), ListWatchErrorKind::Unavailable);
    }
}
