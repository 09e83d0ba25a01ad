//! The walks over an object and its schema that server-side apply is made of (structured-merge-diff
//! `typed`): the set of fields a value holds ([`Walker::to_set`]), the difference between two
//! versions ([`Walker::compare`]), the merge of an applied configuration into the live object
//! ([`Walker::merge`]) and the removal of fields ([`Walker::remove`]).
//!
//! Lists keep the applied order: the applied elements in the order given, then the live elements
//! the configuration does not mention, in their live order (what the real server answers for
//! containers `[a, b]` applied over with `[c, a]`: `[c, a, b]`).

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::schema::{ListKeys, Node, Schemas, Shape};
use kubegen_fieldpath::{FieldSet, display, field};

/// What changed between two versions of an object (structured-merge-diff `Comparison`), from
/// `Tracker::changes`.
#[derive(Debug, Default)]
pub struct Comparison {
    pub(crate) added: FieldSet,
    pub(crate) modified: FieldSet,
    pub(crate) removed: FieldSet,
}

impl Comparison {
    /// What was added or modified: what a writer takes.
    pub(crate) fn touched(&self) -> FieldSet {
        self.added.union(&self.modified)
    }
}

/// The walks, over one kind's schemas.
pub(crate) struct Walker<'a> {
    pub(crate) schemas: Schemas<'a>,
}

/// A configuration the schema cannot type, with the path where it fails.
pub(crate) type WalkError = String;

impl<'a> Walker<'a> {
    /// The encoded element identifying `item` of a granular list.
    ///
    /// # Errors
    /// An associative element without a key field (and no default for it), or a set element that
    /// is not a scalar.
    fn element(
        &self,
        keys: &ListKeys,
        items: Node<'a>,
        (index, item): (usize, &Value),
        path: &[String],
    ) -> Result<String, WalkError> {
        let at = || format!("{}: element {index}", display(path));
        match keys {
            ListKeys::Set if item.is_object() => Err(format!(
                "{}: associative list without keys has an element that's a map type",
                at()
            )),
            ListKeys::Set if item.is_array() => Err(format!(
                "{}: associative list without keys has an element that's a list type",
                at()
            )),
            ListKeys::Set => Ok(format!("v:{item}")),
            ListKeys::Map(keys) => {
                // Key fields the element omits and the schema gives no default for are left out
                // of its key; omitting all of them is an error.
                let fields: Map<String, Value> = keys
                    .iter()
                    .filter_map(|key| {
                        let value = item
                            .get(key)
                            .or_else(|| self.schemas.default_of(items, key))?;
                        Some((key.clone(), value.clone()))
                    })
                    .collect();
                if fields.is_empty() {
                    let quoted: Vec<String> = keys.iter().map(|k| format!("{k:?}")).collect();
                    return Err(format!(
                        "{}: associative list with keys has an element that omits all key fields [{}] (and doesn't have default values for any key fields)",
                        at(),
                        quoted.join(" ")
                    ));
                }
                Ok(format!("k:{}", Value::Object(fields)))
            }
        }
    }

    /// The elements of a granular list by their encoded identity.
    ///
    /// # Errors
    /// As [`Walker::element`], and for two elements with one identity.
    fn elements<'v>(
        &self,
        keys: &ListKeys,
        items: Node<'a>,
        list: &'v [Value],
        path: &[String],
    ) -> Result<Vec<(String, &'v Value)>, WalkError> {
        let mut seen = HashSet::new();
        let mut out = Vec::with_capacity(list.len());
        for (index, item) in list.iter().enumerate() {
            let id = self.element(keys, items, (index, item), path)?;
            if !seen.insert(id.clone()) {
                let key = display(std::slice::from_ref(&id));
                return Err(format!(
                    "{}: duplicate entries for key {key}",
                    display(path)
                ));
            }
            out.push((id, item));
        }
        Ok(out)
    }

    /// The fields `value` sets (structured-merge-diff `ToFieldSet`): leaves, list elements, and
    /// empty or null map values.
    ///
    /// # Errors
    /// As [`Walker::elements`].
    pub(crate) fn to_set(
        &self,
        node: Node<'a>,
        value: &Value,
        path: &mut Vec<String>,
        out: &mut FieldSet,
    ) -> Result<(), WalkError> {
        match (self.schemas.shape(node, value), value) {
            (shape @ Shape::Granular { .. }, Value::Object(map)) => {
                for (key, child) in map {
                    path.push(field(key));
                    self.to_set(Schemas::field(&shape, key), child, path, out)?;
                    let empty = child.is_null() || child.as_object().is_some_and(Map::is_empty);
                    let undeclared = match &shape {
                        Shape::Granular { properties, .. } => {
                            properties.is_none_or(|p| !p.contains_key(key))
                        }
                        _ => false,
                    };
                    if empty || undeclared {
                        out.insert(path);
                    }
                    path.pop();
                }
            }
            (Shape::List { items, keys }, Value::Array(list)) => {
                for (id, item) in self.elements(&keys, items, list, path)? {
                    path.push(id);
                    self.to_set(items, item, path, out)?;
                    out.insert(path);
                    path.pop();
                }
            }
            _ => out.insert(path),
        }
        Ok(())
    }

    /// What changed from `lhs` to `rhs` (structured-merge-diff `Compare`): leaves added, removed
    /// or modified, and every map field or list element that appeared or disappeared.
    ///
    /// # Errors
    /// As [`Walker::elements`].
    pub(crate) fn compare(
        &self,
        node: Node<'a>,
        (lhs, rhs): (Option<&Value>, Option<&Value>),
        path: &mut Vec<String>,
        out: &mut Comparison,
    ) -> Result<(), WalkError> {
        let Some(sample) = rhs.or(lhs) else {
            return Ok(());
        };
        let shape = self.schemas.shape(node, sample);
        let pairs = match (&shape, lhs, rhs) {
            (Shape::Granular { .. }, l, r) if is_empty_map(l) && is_empty_map(r) => None,
            (Shape::Granular { .. }, l, r) if all_objects(l, r) => {
                Some(self.field_pairs(&shape, l, r))
            }
            (Shape::List { items, keys }, l, r) if all_arrays(l, r) => {
                Some(self.item_pairs(keys, *items, (l, r), path)?)
            }
            _ => None,
        };
        let Some(pairs) = pairs else {
            leaf_rule((lhs, rhs), path, out);
            return Ok(());
        };
        for (element, child_node, l, r) in pairs {
            path.push(element);
            self.compare(child_node, (l, r), path, out)?;
            match (l, r) {
                (None, Some(_)) => out.added.insert(path),
                (Some(_), None) => out.removed.insert(path),
                _ => {}
            }
            path.pop();
        }
        Ok(())
    }

    fn field_pairs<'v>(
        &self,
        shape: &Shape<'a>,
        lhs: Option<&'v Value>,
        rhs: Option<&'v Value>,
    ) -> Vec<Pair<'a, 'v>> {
        let (l, r) = (
            lhs.and_then(Value::as_object),
            rhs.and_then(Value::as_object),
        );
        let mut keys: Vec<&String> = l.into_iter().chain(r).flat_map(Map::keys).collect();
        keys.sort();
        keys.dedup();
        keys.into_iter()
            .map(|key| {
                let node = Schemas::field(shape, key);
                (
                    field(key),
                    node,
                    l.and_then(|m| m.get(key)),
                    r.and_then(|m| m.get(key)),
                )
            })
            .collect()
    }

    fn item_pairs<'v>(
        &self,
        keys: &ListKeys,
        items: Node<'a>,
        (lhs, rhs): (Option<&'v Value>, Option<&'v Value>),
        path: &[String],
    ) -> Result<Vec<Pair<'a, 'v>>, WalkError> {
        let list =
            |v: Option<&'v Value>| v.and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        let l = self.elements(keys, items, list(lhs), path)?;
        let r = self.elements(keys, items, list(rhs), path)?;
        let mut out: Vec<Pair<'a, 'v>> = Vec::new();
        for (id, item) in &l {
            let other = r.iter().find(|(rid, _)| rid == id).map(|(_, v)| *v);
            out.push((id.clone(), items, Some(*item), other));
        }
        for (id, item) in &r {
            if !l.iter().any(|(lid, _)| lid == id) {
                out.push((id.clone(), items, None, Some(*item)));
            }
        }
        Ok(out)
    }

    /// `config` merged into `live` (structured-merge-diff `Merge`): granular objects and lists
    /// merge field by field and element by element, leaves take the configuration's value.
    ///
    /// # Errors
    /// As [`Walker::elements`].
    pub(crate) fn merge(
        &self,
        node: Node<'a>,
        live: Option<&Value>,
        config: &Value,
        path: &mut Vec<String>,
    ) -> Result<Value, WalkError> {
        match (self.schemas.shape(node, config), live, config) {
            (shape @ Shape::Granular { .. }, Some(Value::Object(old)), Value::Object(new)) => {
                let mut out = old.clone();
                for (key, value) in new {
                    path.push(field(key));
                    let merged =
                        self.merge(Schemas::field(&shape, key), old.get(key), value, path)?;
                    path.pop();
                    out.insert(key.clone(), merged);
                }
                Ok(Value::Object(out))
            }
            (Shape::List { items, keys }, Some(Value::Array(old)), Value::Array(new)) => {
                let old = self.elements(&keys, items, old, path)?;
                let new = self.elements(&keys, items, new, path)?;
                let mut out = Vec::with_capacity(old.len() + new.len());
                for step in interleave(&old, &new) {
                    match step {
                        Step::Live(item) => out.push(item.clone()),
                        Step::Applied(id, item) => {
                            let live_item = old.iter().find(|(lid, _)| lid == id).map(|(_, v)| *v);
                            path.push(id.clone());
                            out.push(self.merge(items, live_item, item, path)?);
                            path.pop();
                        }
                    }
                }
                Ok(Value::Array(out))
            }
            _ => {
                // Validates the configuration's list elements even where nothing merges.
                self.to_set(node, config, path, &mut FieldSet::default())?;
                Ok(config.clone())
            }
        }
    }

    /// Removes from `value` the fields that are members of `remove`, keeping a member whose
    /// descendants `keep` still holds (its unowned parts are removed instead).
    ///
    /// # Errors
    /// As [`Walker::elements`].
    pub(crate) fn remove(
        &self,
        node: Node<'a>,
        value: &mut Value,
        (remove, keep): (&FieldSet, Option<&FieldSet>),
        path: &mut Vec<String>,
    ) -> Result<(), WalkError> {
        let shape = self.schemas.shape(node, value);
        for (element, subtree) in remove.children() {
            let kept = keep.and_then(|k| k.child(element));
            let drop_whole = subtree.is_member() && kept.is_none_or(FieldSet::is_empty);
            path.push(element.clone());
            match (&shape, &mut *value) {
                (Shape::Granular { .. }, Value::Object(map)) => {
                    let key = element.strip_prefix("f:").unwrap_or(element);
                    if drop_whole {
                        map.remove(key);
                    } else if let Some(child) = map.get_mut(key) {
                        self.remove(Schemas::field(&shape, key), child, (subtree, kept), path)?;
                    }
                }
                (Shape::List { items, keys }, Value::Array(list)) => {
                    let ids: Vec<String> = self
                        .elements(keys, *items, list, path)?
                        .into_iter()
                        .map(|(id, _)| id)
                        .collect();
                    if let Some(at) = ids.iter().position(|id| id == element) {
                        if drop_whole {
                            list.remove(at);
                        } else {
                            self.remove(*items, &mut list[at], (subtree, kept), path)?;
                        }
                    }
                }
                _ => {}
            }
            path.pop();
        }
        Ok(())
    }
}

/// One element of a merged list.
enum Step<'v> {
    /// A live element the configuration does not mention.
    Live(&'v Value),
    /// An applied element (merged with its live counterpart, if any).
    Applied(&'v String, &'v Value),
}

/// The order of a merged list: the applied elements in their order; a live element the
/// configuration does not mention stays after the live elements before it (checked on v1.36:
/// containers `[a, b]` applied over with `[c, a]` give `[c, a, b]`, finalizers `[x]` applied
/// over with `[y]` give `[x, y]`).
fn interleave<'v>(old: &'v [(String, &'v Value)], new: &'v [(String, &'v Value)]) -> Vec<Step<'v>> {
    let applied: HashSet<&String> = new.iter().map(|(id, _)| id).collect();
    let mut emitted: HashSet<&String> = HashSet::new();
    let mut out = Vec::with_capacity(old.len() + new.len());
    let (mut live, mut next) = (0, 0);
    while live < old.len() || next < new.len() {
        if let Some((id, item)) = old.get(live) {
            if emitted.contains(id) {
                live += 1;
                continue;
            }
            if !applied.contains(id) {
                out.push(Step::Live(item));
                live += 1;
                continue;
            }
        }
        let Some((id, item)) = new.get(next) else {
            live += 1;
            continue;
        };
        emitted.insert(id);
        out.push(Step::Applied(id, item));
        next += 1;
    }
    out
}

/// One child in a comparison: its element, schema, and the two sides.
type Pair<'a, 'v> = (String, Node<'a>, Option<&'v Value>, Option<&'v Value>);

fn leaf_rule((lhs, rhs): (Option<&Value>, Option<&Value>), path: &[String], out: &mut Comparison) {
    match (lhs, rhs) {
        (None, Some(_)) => out.added.insert(path),
        (Some(_), None) => out.removed.insert(path),
        (Some(l), Some(r)) if l != r => out.modified.insert(path),
        _ => {}
    }
}

// A `null` map or list compares as an empty one that is present (structured-merge-diff reads a
// null list as empty): its elements are added one by one, the field itself is not.

fn is_empty_map(value: Option<&Value>) -> bool {
    value.is_none_or(|v| v.is_null() || v.as_object().is_some_and(Map::is_empty))
}

fn all_objects(lhs: Option<&Value>, rhs: Option<&Value>) -> bool {
    let fits = |v: &Value| v.is_object() || v.is_null();
    lhs.is_none_or(fits) && rhs.is_none_or(fits)
}

fn all_arrays(lhs: Option<&Value>, rhs: Option<&Value>) -> bool {
    let fits = |v: &Value| v.is_array() || v.is_null();
    lhs.is_none_or(fits) && rhs.is_none_or(fits)
}

#[cfg(test)]
#[path = "merge_tests.rs"]
mod tests;
