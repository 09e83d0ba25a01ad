//! What the ring hashes for an object: `namespace/name` of the object, or of its controller
//! owner when it has one, so an owner and its dependents land on the same shard (the owner's
//! shard reconciles both without cross-shard reads).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

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
    }
}
