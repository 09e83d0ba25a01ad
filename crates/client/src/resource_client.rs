//! [`ResourceClient<K>`]: every verb, written once, for any kind.
//!
//! Mirrors client-go's generated typed clients (`kubernetes/typed/apps/v1/deployment.go`) and the
//! generic `gentype.Client[T]` they now delegate to. kubegen's generated clients are one-line
//! facades over this type: the verb logic lives here, not in generated code.

use std::marker::PhantomData;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kube_core::{ObjectList, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

use kubegen_codec::ProtoKind;

use crate::client::{Client, read_body};
use crate::error::{Error, Result};
use crate::options::{
    ApplyOptions, CreateOptions, DeleteOptions, GetOptions, ListOptions, Patch, PatchOptions,
    UpdateOptions,
};
use crate::protobuf::{AnyListDecoder, ProtobufWatch, WireFormat, decode_object, is_protobuf};
use crate::representation::{Read, Representation};
use crate::request::ResourcePath;
use crate::watch::{EventDecoder, WatchStream};
use crate::wire_object::{ObjectHead, WireDecoder, WireObject};

/// What the generic client needs of a kind: kube-core's static `Resource` description (group,
/// version, plural known at compile time), JSON in both directions, and the usual bounds of a
/// value shared across tasks.
///
/// Implemented automatically for every such type (the generated API types and k8s-openapi's); it
/// exists so the bound is written once instead of at every generic use.
pub trait ApiObject:
    Resource<DynamicType = ()>
    + Clone
    + DeserializeOwned
    + Serialize
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
{
}

impl<K> ApiObject for K where
    K: Resource<DynamicType = ()>
        + Clone
        + DeserializeOwned
        + Serialize
        + std::fmt::Debug
        + Send
        + Sync
        + 'static
{
}

/// What the verbs need of any object, whether its kind is known at compile time ([`ApiObject`])
/// or only at run time (kube-core's `DynamicObject`, addressed by an `ApiResource`, see
/// [`ResourceClient::dynamic`]): its metadata, JSON in both directions, and the bounds of a value
/// shared across tasks. Implemented automatically.
pub trait AnyObject:
    Resource + Clone + DeserializeOwned + Serialize + std::fmt::Debug + Send + Sync + 'static
{
}

impl<K> AnyObject for K where
    K: Resource + Clone + DeserializeOwned + Serialize + std::fmt::Debug + Send + Sync + 'static
{
}

/// Typed access to one kind in one scope: a namespace, all namespaces, or the cluster.
///
/// # Scopes
/// - [`ResourceClient::namespaced`]: a namespaced kind in one namespace (all verbs).
/// - [`ResourceClient::all_namespaces`]: a namespaced kind across namespaces; meant for `list` and
///   `watch` (the server rejects writes without a namespace).
/// - [`ResourceClient::cluster`]: a cluster-scoped kind (Node, Namespace, CRD).
///
/// `update` and `update_status` take the name from the object's `metadata.name`.
pub struct ResourceClient<K> {
    client: Client,
    path: ResourcePath,
    /// What `get`, `list` and `watch` ask the server for (see [`crate::metadata`]).
    pub(crate) representation: Representation,
    /// The kind's protobuf messages when it is built in and protobuf is on.
    pub(crate) proto: Option<ProtoKind>,
    _kind: PhantomData<fn() -> K>,
}

impl<K> Clone for ResourceClient<K> {
    fn clone(&self) -> Self {
        ResourceClient {
            client: self.client.clone(),
            path: self.path.clone(),
            representation: self.representation,
            proto: self.proto,
            _kind: PhantomData,
        }
    }
}

impl<K> std::fmt::Debug for ResourceClient<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceClient")
            .field("path", &self.path.collection())
            .field("protobuf", &self.proto.is_some())
            .finish()
    }
}

impl<K> ResourceClient<K>
where
    K: ApiObject,
{
    fn with_scope(client: Client, namespace: Option<&str>) -> Self {
        let path = ResourcePath::new(&K::group(&()), &K::version(&()), &K::plural(&()), namespace);
        let format = client.policies().wire_format;
        let proto = Representation::Object.proto_kind(format, &K::api_version(&()), &K::kind(&()));
        ResourceClient::at(client, path, Representation::Object, proto)
    }

    /// A client for a namespaced kind in `namespace`.
    pub fn namespaced(client: Client, namespace: &str) -> Self {
        Self::with_scope(client, Some(namespace))
    }

    /// A client for a namespaced kind across all namespaces (list and watch).
    pub fn all_namespaces(client: Client) -> Self {
        Self::with_scope(client, None)
    }

    /// A client for a cluster-scoped kind.
    pub fn cluster(client: Client) -> Self {
        Self::with_scope(client, None)
    }

    /// The same client asking for `format` in `get`, `list` and `watch` (the client's
    /// [`Config::wire_format`](crate::Config::wire_format) by default). Custom resources always
    /// use JSON; metadata-only clients use protobuf for every kind (the server converts each
    /// object to a `PartialObjectMetadata`, whose protobuf form it always has).
    pub fn with_wire_format(mut self, format: WireFormat) -> Self {
        self.proto = self
            .representation
            .proto_kind(format, &K::api_version(&()), &K::kind(&()));
        self
    }
}

impl<K> ResourceClient<K>
where
    K: AnyObject,
{
    /// A client for the resource at `path`, reading in `representation` (and `proto` when set).
    pub(crate) fn at(
        client: Client,
        path: ResourcePath,
        representation: Representation,
        proto: Option<ProtoKind>,
    ) -> Self {
        ResourceClient {
            client,
            path,
            representation,
            proto,
            _kind: PhantomData,
        }
    }

    /// Whether `get`, `list` and `watch` ask for protobuf.
    pub fn asks_for_protobuf(&self) -> bool {
        self.proto.is_some()
    }

    /// `request` with the `Accept` of `read` in this client's representation and wire format.
    fn accept(
        &self,
        mut request: http::Request<bytes::Bytes>,
        read: Read,
    ) -> http::Request<bytes::Bytes> {
        let accept = self.representation.accept(read, self.proto.is_some());
        request
            .headers_mut()
            .insert(http::header::ACCEPT, http::HeaderValue::from_static(accept));
        request
    }

    /// The underlying client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The collection path, e.g. `/apis/apps/v1/namespaces/ns/deployments`.
    pub fn collection_path(&self) -> &str {
        self.path.collection()
    }

    /// `GET` one object.
    ///
    /// # Errors
    /// [`Error::is_not_found`] when it does not exist.
    pub async fn get(&self, name: &str, opts: &GetOptions) -> Result<K> {
        let request = self.accept(self.path.get(name, None, opts)?, Read::Get);
        if self.proto.is_none() {
            return self.client.request_json(request).await;
        }
        let url = request.uri().to_string();
        self.client
            .with_timeout("GET", &url, async {
                let mut response = self.client.send(request).await?;
                let protobuf = is_protobuf(response.headers());
                let bytes = read_body(response.body_mut(), "GET", &url).await?;
                if protobuf {
                    return decode_object(&bytes, &url);
                }
                serde_json::from_slice(&bytes).map_err(|source| Error::Decode {
                    what: format!("response of GET {url}"),
                    excerpt: crate::error::excerpt(&bytes),
                    source,
                })
            })
            .await
    }

    /// `GET` the collection (one page when `opts.limit` is set), decoding items as they stream in.
    ///
    /// # Errors
    /// [`Error::is_gone`] for an expired `continue` token or a compacted `resourceVersion`.
    pub async fn list(&self, opts: &ListOptions) -> Result<ObjectList<K>> {
        let mut items = Vec::new();
        let mut list = self.list_each(opts, |item| items.push(item)).await?;
        list.items = items;
        Ok(list)
    }

    /// Like [`list`](Self::list), but hands each item to `each` as soon as it is decoded, in
    /// body order, and returns the list with empty `items`.
    ///
    /// The caller can shrink or drop every item before the next one arrives (an informer's
    /// transform does), so memory follows what it keeps, not the size of the response: a list
    /// the watch cache serves unpaged can hold every object of a kind.
    ///
    /// # Errors
    /// As [`list`](Self::list). Items handed over before an error are not taken back.
    pub async fn list_each(
        &self,
        opts: &ListOptions,
        mut each: impl FnMut(K) + Send,
    ) -> Result<ObjectList<K>> {
        self.list_items(opts, false, |item, _| each(item)).await
    }

    /// [`list_each`](Self::list_each), handing each item over with its bytes: a copy of its slice
    /// of the response (JSON) or of its message (protobuf), which [`wire_decoder`](Self::wire_decoder)
    /// decodes back into the same object. A byte-backed cache keeps these instead of the item.
    ///
    /// # Errors
    /// As [`list`](Self::list).
    pub async fn list_each_with_bytes(
        &self,
        opts: &ListOptions,
        each: impl FnMut(K, WireObject) + Send,
    ) -> Result<ObjectList<K>> {
        self.list_each_as_with_bytes(opts, each).await
    }

    /// [`list_each_with_bytes`](Self::list_each_with_bytes), decoding each item as an
    /// [`ObjectHead`] (its name, namespace, resourceVersion and labels, the rest skipped) instead
    /// of in full: a byte-backed cache reads these on arrival and decodes the bytes only when
    /// the object is read.
    ///
    /// # Errors
    /// As [`list`](Self::list): an item that does not decode names the list and the item.
    pub async fn list_each_head_with_bytes(
        &self,
        opts: &ListOptions,
        each: impl FnMut(ObjectHead, WireObject) + Send,
    ) -> Result<ListMeta> {
        let list = self.list_each_as_with_bytes(opts, each).await?;
        Ok(list.metadata)
    }

    /// Lists with each item decoded as `T` and handed to `each` with its bytes.
    async fn list_each_as_with_bytes<T: DeserializeOwned + Clone + Send>(
        &self,
        opts: &ListOptions,
        mut each: impl FnMut(T, WireObject) + Send,
    ) -> Result<ObjectList<T>> {
        let url = self.path.collection().to_owned();
        let mut missing = None;
        let list = self
            .list_items(opts, true, |item, bytes| match bytes {
                Some(bytes) => each(item, bytes),
                None => missing = Some(()),
            })
            .await?;
        match missing {
            None => Ok(list),
            Some(()) => Err(Error::MalformedList {
                url,
                offset: 0,
                message: "an item's bytes were not kept".into(),
            }),
        }
    }

    /// Decodes the bytes [`list_each_with_bytes`](Self::list_each_with_bytes) and
    /// [`WatchStream::next_with_bytes`] hand out into the objects they were decoded as.
    pub fn wire_decoder(&self) -> WireDecoder {
        WireDecoder { proto: self.proto }
    }

    /// Lists with each item decoded as `T` (the client's kind, or a part of it such as an
    /// [`ObjectHead`]), handing it to `each` with its bytes when `keep_bytes`.
    async fn list_items<T: DeserializeOwned + Clone + Send>(
        &self,
        opts: &ListOptions,
        keep_bytes: bool,
        mut each: impl FnMut(T, Option<WireObject>) + Send,
    ) -> Result<ObjectList<T>> {
        let request = self.accept(self.path.list(opts)?, Read::List);
        let url = request.uri().to_string();
        self.client
            .with_timeout("GET", &url, async {
                let mut response = self.client.send(request).await?;
                let mut decoder = AnyListDecoder::<T>::new(response.headers(), self.proto, &url);
                if keep_bytes {
                    decoder = decoder.keeping_bytes();
                }
                while let Some(chunk) = response.body_mut().next_chunk().await {
                    let chunk = chunk.map_err(|e| Error::RequestFailed {
                        verb: "GET".into(),
                        url: url.clone(),
                        message: format!("reading list body: {e}"),
                    })?;
                    decoder.feed(&chunk)?;
                    decoder
                        .take_items_with_bytes()
                        .for_each(|(item, bytes)| each(item, bytes));
                }
                decoder.finish()
            })
            .await
    }

    /// Opens a watch. Events arrive through the returned stream.
    ///
    /// The stream's idle timeout is `timeout_seconds` plus a margin (or a default when unset), so a
    /// dead connection ends the stream with [`Error::WatchIdle`].
    pub async fn watch(&self, opts: &ListOptions) -> Result<WatchStream<K>> {
        let request = self.accept(self.path.watch(opts)?, Read::Watch);
        let url = request.uri().to_string();
        let policies = self.client.policies();
        let idle = match opts.timeout_seconds {
            Some(seconds) => Duration::from_secs(u64::from(seconds)) + policies.watch_idle_margin,
            None => policies.watch_idle_default,
        };
        let response = self
            .client
            .with_timeout("GET", &url, self.client.send(request))
            .await?;
        if self.proto.is_some() && is_protobuf(response.headers()) {
            let decoder = EventDecoder::Protobuf(ProtobufWatch::new(&url));
            let body = response.into_body();
            return Ok(WatchStream::with_decoder(body, &url, Some(idle), decoder));
        }
        Ok(WatchStream::new(response.into_body(), &url, Some(idle)))
    }

    /// `POST` a new object.
    ///
    /// # Errors
    /// [`Error::is_already_exists`] when the name is taken.
    pub async fn create(&self, obj: &K, opts: &CreateOptions) -> Result<K> {
        let body = encode(obj, "create")?;
        self.client
            .request_json(self.path.create(None, body, opts)?)
            .await
    }

    /// `PUT` the object (optimistic concurrency on its `resourceVersion`).
    ///
    /// # Errors
    /// [`Error::is_conflict`] when the object changed since it was read.
    pub async fn update(&self, obj: &K, opts: &UpdateOptions) -> Result<K> {
        self.put(obj, None, opts).await
    }

    /// `PUT` the object's `/status` subresource (only the status is written).
    pub async fn update_status(&self, obj: &K, opts: &UpdateOptions) -> Result<K> {
        self.put(obj, Some("status"), opts).await
    }

    async fn put(&self, obj: &K, subresource: Option<&str>, opts: &UpdateOptions) -> Result<K> {
        let name = obj.meta().name.as_deref().ok_or_else(|| {
            Error::BuildRequest(format!(
                "update of an object of {} without metadata.name",
                self.path.collection()
            ))
        })?;
        let body = encode(obj, "update")?;
        self.client
            .request_json(self.path.update(name, subresource, body, opts)?)
            .await
    }

    /// `PATCH` the object.
    pub async fn patch(&self, name: &str, patch: &Patch, opts: &PatchOptions) -> Result<K> {
        self.client
            .request_json(self.path.patch(name, None, patch, opts)?)
            .await
    }

    /// `PATCH` the object's `/status` subresource.
    pub async fn patch_status(&self, name: &str, patch: &Patch, opts: &PatchOptions) -> Result<K> {
        self.client
            .request_json(self.path.patch(name, Some("status"), patch, opts)?)
            .await
    }

    /// `DELETE` the object.
    ///
    /// Returns when the server accepted the deletion; an object with finalizers stays (with a
    /// `deletionTimestamp`) until they are removed.
    pub async fn delete(&self, name: &str, opts: &DeleteOptions) -> Result<()> {
        let _: serde_json::Value = self
            .client
            .request_json(self.path.delete(name, opts)?)
            .await?;
        Ok(())
    }

    /// `DELETE` every object matching the selectors of `list`.
    pub async fn delete_collection(
        &self,
        delete: &DeleteOptions,
        list: &ListOptions,
    ) -> Result<()> {
        let request = self.path.delete_collection(delete, list)?;
        let _: serde_json::Value = self.client.request_json(request).await?;
        Ok(())
    }

    /// `GET {name}/{subresource}` decoded as `R` (e.g. `scale`).
    pub async fn get_subresource<R: DeserializeOwned>(
        &self,
        name: &str,
        subresource: &str,
    ) -> Result<R> {
        let request = self
            .path
            .get(name, Some(subresource), &GetOptions::default())?;
        self.client.request_json(request).await
    }

    /// `POST {name}/{subresource}` with `body` (e.g. `eviction`), decoding the answer as `R`.
    pub async fn create_subresource<B: Serialize, R: DeserializeOwned>(
        &self,
        name: &str,
        subresource: &str,
        body: &B,
        opts: &CreateOptions,
    ) -> Result<R> {
        let body = encode(body, subresource)?;
        self.client
            .request_json(self.path.create(Some((name, subresource)), body, opts)?)
            .await
    }

    /// `PUT {name}/{subresource}` with `body`, decoding the answer as `R`.
    pub async fn update_subresource<B: Serialize, R: DeserializeOwned>(
        &self,
        name: &str,
        subresource: &str,
        body: &B,
        opts: &UpdateOptions,
    ) -> Result<R> {
        let body = encode(body, subresource)?;
        self.client
            .request_json(self.path.update(name, Some(subresource), body, opts)?)
            .await
    }

    /// Server-side apply of `config` (a partial object: `apiVersion`, `kind`, `metadata.name` and
    /// the fields this manager owns) as `opts.field_manager`: the server merges it into the
    /// object, or creates the object, and removes the fields this manager applied before and no
    /// longer applies. A field another manager set to a different value is a conflict
    /// ([`Error::is_conflict`], the causes name field and manager) unless `opts.force`.
    ///
    /// # Errors
    /// [`Error::ApplyUnsupported`] from a server without server-side apply (Kubernetes before
    /// 1.16 answers 415), the server's error otherwise.
    pub async fn apply<T: Serialize>(
        &self,
        name: &str,
        config: &T,
        opts: &ApplyOptions,
    ) -> Result<K> {
        self.apply_to(name, None, config, opts).await
    }

    /// [`ResourceClient::apply`] on the `/status` subresource.
    ///
    /// # Errors
    /// As [`ResourceClient::apply`].
    pub async fn apply_status<T: Serialize>(
        &self,
        name: &str,
        config: &T,
        opts: &ApplyOptions,
    ) -> Result<K> {
        self.apply_to(name, Some("status"), config, opts).await
    }

    async fn apply_to<T: Serialize>(
        &self,
        name: &str,
        subresource: Option<&str>,
        config: &T,
        opts: &ApplyOptions,
    ) -> Result<K> {
        let value = serde_json::to_value(config).map_err(|source| Error::Encode {
            what: format!("apply configuration of {name}"),
            source,
        })?;
        let patch = Patch::Apply(value);
        let request = self
            .path
            .patch(name, subresource, &patch, &opts.patch_options())?;
        self.client
            .request_json(request)
            .await
            .map_err(Error::for_apply)
    }

    /// `PATCH {name}/{subresource}`, decoding the answer as `R`.
    pub async fn patch_subresource<R: DeserializeOwned>(
        &self,
        name: &str,
        subresource: &str,
        patch: &Patch,
        opts: &PatchOptions,
    ) -> Result<R> {
        self.client
            .request_json(self.path.patch(name, Some(subresource), patch, opts)?)
            .await
    }
}

fn encode<T: Serialize>(value: &T, what: &str) -> Result<Vec<u8>> {
    serde_json::to_vec(value).map_err(|source| Error::Encode {
        what: what.to_owned(),
        source,
    })
}
