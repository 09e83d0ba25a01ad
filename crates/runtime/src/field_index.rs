//! Field-selector lists from the cache: `MatchingFields{"spec.nodeName": "n1"}` answered by an
//! index the controller registered, instead of a scan of every cached object or a request.
//!
//! Mirrors controller-runtime's field indexer (`pkg/cache/informer_cache.go`: `IndexField`, which
//! files each value twice, under `<namespace>/<value>` and `__all_namespaces/<value>`, so one
//! index answers namespaced and cluster-wide lists) and its cache reader
//! (`pkg/cache/internal/cache_reader.go`: `requiresExactMatch`, `byIndexes`, the index name
//! `field:<field>`).
//!
//! # The rules
//! - Every requirement is an exact match (`field=value` or `field==value`); `!=` is refused, as
//!   controller-runtime refuses it ("non-exact field matches are not supported by the cache").
//! - Each field needs an index registered with [`CachedClient::index_field`](crate::CachedClient::index_field)
//!   before the list; a field without one is [`Error::FieldNotIndexed`] naming the field and the
//!   kind, never a silent full scan.
//! - `metadata.name` and `metadata.namespace` need no index (every server supports them as field
//!   selectors, and the cache knows both from the key).
//! - Several requirements intersect; labels filter the result as in an unfiltered list.
//!
//! # Differences from controller-runtime
//! controller-runtime needs an index for `metadata.name` too; here it is answered from the key.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use kube_core::{Selector, SelectorExt};
use kubegen_cache::{Indexer, ObjectKey};

use crate::error::Error;

/// The namespace part of an index value that files an object for lists across namespaces
/// (controller-runtime's `allNamespacesNamespace`).
const ALL_NAMESPACES: &str = "__all_namespaces";
/// Fields answered from the object's key, without an index.
const NAME_FIELD: &str = "metadata.name";
const NAMESPACE_FIELD: &str = "metadata.namespace";

/// Exact field matches for [`CachedClient::list_by_fields`](crate::CachedClient::list_by_fields):
/// controller-runtime's `client.MatchingFields`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MatchingFields {
    /// Field path to the value it must equal. Invariant: no empty field path.
    fields: BTreeMap<String, String>,
}

impl MatchingFields {
    /// Matches on every `(field, value)` pair, e.g. `[("spec.nodeName", "n1")]`.
    pub fn new<F: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (F, V)>,
    ) -> MatchingFields {
        MatchingFields {
            fields: pairs
                .into_iter()
                .map(|(f, v)| (f.into(), v.into()))
                .filter(|(f, _)| !f.is_empty())
                .collect(),
        }
    }

    /// Reads a field selector string (`spec.nodeName=n1,status.phase==Running`).
    ///
    /// # Errors
    /// [`Error::FieldSelectorNotExact`] for a `!=` requirement or one without `=`.
    pub fn parse(selector: &str) -> Result<MatchingFields, Error> {
        let mut fields = BTreeMap::new();
        for requirement in selector.split(',').map(str::trim).filter(|r| !r.is_empty()) {
            let exact = requirement
                .split_once("==")
                .or_else(|| requirement.split_once('='))
                .filter(|(field, _)| !field.is_empty() && !field.ends_with('!'));
            let Some((field, value)) = exact else {
                return Err(Error::FieldSelectorNotExact {
                    selector: selector.to_owned(),
                });
            };
            fields.insert(field.trim().to_owned(), value.trim().to_owned());
        }
        Ok(MatchingFields { fields })
    }

    /// Whether nothing is required.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }
}

/// The name of the index over `field`.
pub(crate) fn index_name(field: &str) -> String {
    format!("field:{field}")
}

/// What an object with `raw` values of a field is filed under: each value for lists across
/// namespaces, and, for a namespaced object, under its namespace too.
pub(crate) fn filed_values(namespace: Option<&str>, raw: Vec<String>) -> Vec<String> {
    let mut values = Vec::with_capacity(raw.len() * 2);
    for value in raw {
        if let Some(namespace) = namespace.filter(|ns| !ns.is_empty()) {
            values.push(format!("{namespace}/{value}"));
        }
        values.push(format!("{ALL_NAMESPACES}/{value}"));
    }
    values
}

/// The objects of `indexer` in `namespace` (`None`: all) matching `fields` and `labels`.
///
/// # Errors
/// [`Error::FieldNotIndexed`] for a field without an index.
pub(crate) fn select<K: kube_core::Resource>(
    indexer: &Indexer<K>,
    kind: &str,
    namespace: Option<&str>,
    fields: &MatchingFields,
    labels: &Selector,
) -> Result<Vec<Arc<K>>, Error> {
    let mut namespace = namespace.map(str::to_owned);
    if let Some(wanted) = fields.fields.get(NAMESPACE_FIELD) {
        if namespace.as_ref().is_some_and(|ns| ns != wanted) {
            return Ok(Vec::new());
        }
        namespace = Some(wanted.clone());
    }
    let name = fields.fields.get(NAME_FIELD);
    let mut keys: Option<BTreeSet<ObjectKey>> = None;
    for (field, value) in &fields.fields {
        if field == NAME_FIELD || field == NAMESPACE_FIELD {
            continue;
        }
        let lookup = filed_values(namespace.as_deref(), vec![value.clone()]);
        // The namespaced value when there is a namespace, else the all-namespaces one.
        let wanted = &lookup[0];
        let found: BTreeSet<ObjectKey> = indexer
            .index_keys(&index_name(field), wanted)
            .map_err(|_| Error::FieldNotIndexed {
                kind: kind.to_owned(),
                field: field.clone(),
            })?
            .into_iter()
            .collect();
        keys = Some(match keys {
            Some(previous) => previous.intersection(&found).cloned().collect(),
            None => found,
        });
    }
    let candidates = match keys {
        Some(keys) => keys
            .iter()
            .filter_map(|key| {
                indexer
                    .get_by_key(key.as_str())
                    .map(|obj| (key.clone(), obj))
            })
            .collect::<Vec<_>>(),
        None => indexer
            .list()
            .into_iter()
            .map(|obj| (ObjectKey::of(obj.as_ref()), obj))
            .collect(),
    };
    Ok(candidates
        .into_iter()
        .filter(|(key, _)| namespace.is_none() || key.namespace() == namespace.as_deref())
        .filter(|(key, _)| name.is_none_or(|name| key.name() == name))
        .filter(|(_, obj)| labels_match(labels, obj.as_ref()))
        .map(|(_, obj)| obj)
        .collect())
}

fn labels_match<K: kube_core::Resource>(labels: &Selector, obj: &K) -> bool {
    if labels.selects_all() {
        return true;
    }
    let empty = BTreeMap::new();
    labels.matches(obj.meta().labels.as_ref().unwrap_or(&empty))
}

#[cfg(test)]
#[path = "field_index_tests.rs"]
mod tests;
