//! What the ring hashes for an object: `namespace/name` of the object, or of its controller
//! owner when it has one, so an owner and its dependents land on the same shard (the owner's
//! shard reconciles both without cross-shard reads). A controller whose unit of work is a
//! namespace (it judges all of a namespace's objects at once) shards by namespace instead
//! ([`RingKey::Namespace`]), so one shard holds all of a namespace's objects.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::ring::SelectorField;

/// What the ring hashes for an object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RingKey {
    /// `namespace/name` of the object or of its controller owner ([`ring_key`]).
    #[default]
    Object,
    /// The object's namespace: a namespace's objects all land on one shard.
    Namespace,
}

impl RingKey {
    /// The key hashed for the object with metadata `meta`.
    pub fn of(self, meta: &ObjectMeta) -> String {
        match self {
            RingKey::Object => ring_key(meta),
            RingKey::Namespace => meta.namespace.clone().unwrap_or_default(),
        }
    }

    /// The field a server-side `shardSelector` hashes in its place: an object's UID (neither its
    /// name nor its owner's is among KEP-5866's fields, so dependents do not follow their owner
    /// there), or its namespace.
    pub fn selector_field(self) -> SelectorField {
        match self {
            RingKey::Object => SelectorField::Uid,
            RingKey::Namespace => SelectorField::Namespace,
        }
    }
}

/// The ring key of an object with metadata `meta`.
pub fn ring_key(meta: &ObjectMeta) -> String {
    let namespace = meta.namespace.as_deref().unwrap_or("");
    let controller = meta
        .owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true));
    let name = match controller {
        Some(owner) => owner.name.as_str(),
        None => meta.name.as_deref().unwrap_or(""),
    };
    format!("{namespace}/{name}")
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    use super::*;

    #[test]
    fn dependents_hash_like_their_controller() {
        let owner = ObjectMeta {
            namespace: Some("ns".into()),
            name: Some("web".into()),
            ..ObjectMeta::default()
        };
        let reference = |controller| OwnerReference {
            name: "web".into(),
            controller,
            ..OwnerReference::default()
        };
        let dependent = ObjectMeta {
            namespace: Some("ns".into()),
            name: Some("web-7f9c".into()),
            owner_references: Some(vec![reference(Some(true))]),
            ..ObjectMeta::default()
        };
        let non_controller = ObjectMeta {
            owner_references: Some(vec![reference(None)]),
            ..dependent.clone()
        };
        assert_eq!(ring_key(&owner), "ns/web");
        assert_eq!(ring_key(&dependent), "ns/web");
        assert_eq!(ring_key(&non_controller), "ns/web-7f9c");
        assert_eq!(RingKey::Object.of(&dependent), "ns/web");
        assert_eq!(RingKey::Namespace.of(&dependent), "ns");
    }
}
