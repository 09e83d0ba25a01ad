//! Pruning of unknown fields (apiextensions `pkg/apiserver/schema/pruning/algorithm.go`): a field
//! the structural schema does not declare is dropped, unless a node says
//! `x-kubernetes-preserve-unknown-fields` (its undeclared fields stay, declared ones are still
//! pruned below). `apiVersion`, `kind` and `metadata` of the object itself and of every
//! `x-kubernetes-embedded-resource` stay; an embedded object's `metadata` keeps only the fields
//! of `ObjectMeta` (`pkg/apiserver/schema/objectmeta`), the root's is the server's business.

use serde_json::{Map, Value};

use crate::node::Node;

/// The fields of `metav1.ObjectMeta`.
const OBJECT_META: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// Prunes `object` (a whole custom resource) under its root `schema`.
pub(crate) fn prune_root(object: &mut Value, schema: Node<'_>) {
    if let Value::Object(map) = object {
        prune_object(map, Some(schema), true, schema.preserve_unknown());
    }
}

fn prune(value: &mut Value, schema: Option<Node<'_>>) {
    let preserve = schema.is_some_and(Node::preserve_unknown);
    match value {
        Value::Object(map) => {
            let embedded = schema.is_some_and(Node::embedded);
            prune_object(map, schema, embedded, preserve);
        }
        Value::Array(items) => {
            let item = schema.and_then(Node::items);
            if preserve && item.is_none() {
                return;
            }
            for v in items {
                prune(v, item);
            }
        }
        _ => {}
    }
}

fn prune_object(
    map: &mut Map<String, Value>,
    schema: Option<Node<'_>>,
    resource: bool,
    preserve: bool,
) {
    let kept = |key: &str| resource && matches!(key, "apiVersion" | "kind" | "metadata");
    map.retain(|key, _| kept(key) || preserve || schema.is_some_and(|s| s.field(key).is_some()));
    for (key, v) in map.iter_mut() {
        if kept(key) {
            continue;
        }
        match schema.and_then(|s| s.field(key)) {
            Some(field) => prune(v, Some(field)),
            None if preserve => {}
            None => prune(v, None),
        }
    }
}

/// Drops the fields of every embedded resource's `metadata` that `ObjectMeta` does not have.
pub(crate) fn prune_embedded_metadata(value: &mut Value, schema: Node<'_>, root: bool) {
    match value {
        Value::Object(map) => {
            if !root
                && schema.embedded()
                && let Some(Value::Object(meta)) = map.get_mut("metadata")
            {
                meta.retain(|key, _| OBJECT_META.contains(&key.as_str()));
            }
            for (key, v) in map.iter_mut() {
                if let Some(field) = schema.field(key) {
                    prune_embedded_metadata(v, field, false);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.items() {
                for v in items {
                    prune_embedded_metadata(v, item, false);
                }
            }
        }
        _ => {}
    }
}
