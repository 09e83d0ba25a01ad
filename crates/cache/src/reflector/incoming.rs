//! What the reflector asks its list-watch for, and the objects it gets back before the queue
//! makes them entries.
//!
//! client-go's reflector (`tools/cache/reflector.go`) always receives decoded objects. kubegen's
//! byte-backed store (`store_mode.rs`) can take less: the object's bytes and a few metadata fields
//! read from them ([`WireItem`]), so the only full decode of an object is the one its handlers
//! need. This module picks, per informer, the cheapest form the store can use ([`Fetch`]) and
//! reads the next watch event in that form.

use std::sync::Arc;

use kube_core::{Resource, WatchEvent};

use crate::{
    key::ObjectKey,
    list_watch::{EventStream, ListWatchError},
    store_mode::{WireBytes, WireItem},
    stored::Arrived,
};

/// The form in which the reflector asks for objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fetch {
    /// Decoded objects: a decoded store, or a transform that must see every object.
    Decoded,
    /// Decoded objects with the bytes they were decoded from: a byte-backed store whose custom
    /// index functions need the typed object, or a list-watch without wire items.
    WithBytes,
    /// Bytes and the metadata read from them ([`WireItem`]), nothing decoded in full.
    Wire,
}

impl Fetch {
    /// The form for a queue that keeps bytes (`keeps_bytes`) or not, with or without a
    /// transform, custom indexes (`files_decoded`) and a list-watch that hands out wire items.
    pub(crate) fn choose(
        keeps_bytes: bool,
        has_transform: bool,
        files_decoded: bool,
        hands_out_wire_items: bool,
    ) -> Self {
        match (
            keeps_bytes && !has_transform,
            files_decoded,
            hands_out_wire_items,
        ) {
            (false, _, _) => Self::Decoded,
            (true, false, true) => Self::Wire,
            (true, _, _) => Self::WithBytes,
        }
    }
}

/// An object as the list-watch handed it over, before the transform.
pub(crate) enum Incoming<K> {
    /// Decoded, with the bytes it was decoded from when they were asked for.
    Object(K, Option<WireBytes>),
    /// Bytes and metadata.
    Wire(WireItem),
}

impl<K: Resource> Incoming<K> {
    /// `metadata.resourceVersion`, when set.
    pub(crate) fn resource_version(&self) -> Option<&str> {
        match self {
            Self::Object(obj, _) => obj.meta().resource_version.as_deref(),
            Self::Wire(item) => Some(item.resource_version.as_str()).filter(|rv| !rv.is_empty()),
        }
    }

    /// The object's key.
    pub(crate) fn key(&self) -> ObjectKey {
        match self {
            Self::Object(obj, _) => ObjectKey::of(obj),
            Self::Wire(item) => ObjectKey::new(item.namespace.as_deref(), &item.name),
        }
    }

    /// The object as the queue receives it, `transform` run on a decoded one (`None`: the
    /// transform skipped it).
    pub(crate) fn arrive(self, transform: impl FnOnce(K) -> Option<Arc<K>>) -> Option<Arrived<K>> {
        match self {
            Self::Object(obj, wire) => Some(Arrived::Object(transform(obj)?, wire)),
            Self::Wire(item) => Some(Arrived::Wire(item)),
        }
    }
}

/// The next event of `stream`, its object in the form `fetch` asks for.
pub(crate) async fn next_event<K, S: EventStream<K>>(
    stream: &mut S,
    fetch: Fetch,
) -> Option<Result<WatchEvent<Incoming<K>>, ListWatchError>> {
    let next = match fetch {
        Fetch::Wire => {
            let next = stream.next_wire_event().await?;
            return Some(next.map(|event| map_object(event, Incoming::Wire)));
        }
        Fetch::WithBytes => stream.next_event_with_bytes().await?,
        Fetch::Decoded => stream.next_event().await?.map(|event| (event, None)),
    };
    Some(next.map(|(event, wire)| map_object(event, |obj| Incoming::Object(obj, wire))))
}

/// `event` with its object (if it carries one) turned into another by `f`.
fn map_object<T, U>(event: WatchEvent<T>, f: impl FnOnce(T) -> U) -> WatchEvent<U> {
    match event {
        WatchEvent::Added(obj) => WatchEvent::Added(f(obj)),
        WatchEvent::Modified(obj) => WatchEvent::Modified(f(obj)),
        WatchEvent::Deleted(obj) => WatchEvent::Deleted(f(obj)),
        WatchEvent::Bookmark(bookmark) => WatchEvent::Bookmark(bookmark),
        WatchEvent::Error(status) => WatchEvent::Error(status),
    }
}

#[cfg(test)]
mod tests {
    use super::Fetch;

    #[test]
    fn a_byte_store_reads_wire_items_only_when_nothing_needs_the_decoded_object() {
        // (keeps bytes, transform, custom indexes, wire items served) -> form
        let cases = [
            ((false, false, false, true), Fetch::Decoded),
            ((false, true, true, true), Fetch::Decoded),
            ((true, true, false, true), Fetch::Decoded),
            ((true, false, false, true), Fetch::Wire),
            ((true, false, true, true), Fetch::WithBytes),
            ((true, false, false, false), Fetch::WithBytes),
        ];
        for ((bytes, transform, indexed, wire), expected) in cases {
            assert_eq!(
                Fetch::choose(bytes, transform, indexed, wire),
                expected,
                "bytes {bytes}, transform {transform}, indexed {indexed}, wire {wire}"
            );
        }
    }
}
