//! [`FieldSet`]: sets of field paths, the `fieldsV1` of `metadata.managedFields`
//! (structured-merge-diff `fieldpath/set.go` and its `FieldsV1` serialization, `serialize.go`).
//!
//! A path is a sequence of encoded elements, exactly as `fieldsV1` spells them: `f:<name>` for a
//! field of a struct or map, `k:{"name":"c"}` for the element of an associative list (its key
//! fields as a JSON object, fields sorted), `v:"x"` for the element of a set list (its JSON value)
//! and `i:<n>` for a list index. A node of the tree is either a member of the set (the path itself
//! is owned), an ancestor of members, or both; serialized, a member leaf is `{}` and a member with
//! children carries a `".": {}` entry, as the real encoding does.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::Error;

/// A set of paths, as a tree of encoded path elements.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSet {
    member: bool,
    children: BTreeMap<String, FieldSet>,
}

impl FieldSet {
    /// Adds `path` (a path of no elements is the root, which never is a member).
    pub fn insert(&mut self, path: &[String]) {
        let Some((first, rest)) = path.split_first() else {
            return;
        };
        let child = self.children.entry(first.clone()).or_default();
        if rest.is_empty() {
            child.member = true;
        } else {
            child.insert(rest);
        }
    }

    /// Whether the set has no members.
    pub fn is_empty(&self) -> bool {
        !self.member && self.children.is_empty()
    }

    /// The subtree under one element, if any.
    pub fn child(&self, element: &str) -> Option<&FieldSet> {
        self.children.get(element)
    }

    /// Whether this node itself is in the set.
    pub fn is_member(&self) -> bool {
        self.member
    }

    /// The direct children, by encoded element.
    pub fn children(&self) -> impl Iterator<Item = (&String, &FieldSet)> {
        self.children.iter()
    }

    /// Every member path, in order.
    pub fn paths(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        if self.member {
            out.push(prefix.clone());
        }
        for (element, child) in &self.children {
            prefix.push(element.clone());
            child.collect(prefix, out);
            prefix.pop();
        }
    }

    /// The members of either set.
    pub fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.member |= other.member;
        for (element, child) in &other.children {
            let merged = match out.children.get(element) {
                Some(mine) => mine.union(child),
                None => child.clone(),
            };
            out.children.insert(element.clone(), merged);
        }
        out
    }

    /// The members of `self` that are not members of `other` (member by member: a member of
    /// `other` does not remove the members below it).
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet {
            member: self.member && !other.member,
            children: BTreeMap::new(),
        };
        for (element, child) in &self.children {
            let rest = match other.children.get(element) {
                Some(theirs) => child.difference(theirs),
                None => child.clone(),
            };
            if !rest.is_empty() {
                out.children.insert(element.clone(), rest);
            }
        }
        out
    }

    /// The members of both sets.
    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet {
            member: self.member && other.member,
            children: BTreeMap::new(),
        };
        for (element, child) in &self.children {
            if let Some(theirs) = other.children.get(element) {
                let both = child.intersection(theirs);
                if !both.is_empty() {
                    out.children.insert(element.clone(), both);
                }
            }
        }
        out
    }

    /// The set without the subtrees rooted at the members of `ignored` (structured-merge-diff
    /// `RecursiveDifference`).
    pub fn without_subtrees(&self, ignored: &FieldSet) -> FieldSet {
        let mut out = FieldSet {
            member: self.member,
            children: BTreeMap::new(),
        };
        for (element, child) in &self.children {
            let rest = match ignored.children.get(element) {
                Some(theirs) if theirs.member => continue,
                Some(theirs) => child.without_subtrees(theirs),
                None => child.clone(),
            };
            if !rest.is_empty() {
                out.children.insert(element.clone(), rest);
            }
        }
        out
    }

    /// The `fieldsV1` form.
    pub fn to_fields_v1(&self) -> Value {
        let mut map = Map::new();
        if self.member && !self.children.is_empty() {
            map.insert(".".into(), Value::Object(Map::new()));
        }
        for (element, child) in &self.children {
            map.insert(element.clone(), child.to_fields_v1());
        }
        Value::Object(map)
    }

    /// Reads a `fieldsV1` value.
    ///
    /// # Errors
    /// [`Error::InvalidFieldsV1`] naming the first element that is not an object or not a known
    /// element kind.
    pub fn from_fields_v1(value: &Value) -> Result<FieldSet, Error> {
        let Some(map) = value.as_object() else {
            return Err(Error::InvalidFieldsV1(format!(
                "expected an object, found {value}"
            )));
        };
        let mut out = FieldSet::default();
        for (element, child) in map {
            if element == "." {
                out.member = true;
                continue;
            }
            if !["f:", "k:", "v:", "i:"]
                .iter()
                .any(|p| element.starts_with(p))
            {
                return Err(Error::InvalidFieldsV1(format!(
                    "unknown path element {element:?}"
                )));
            }
            let mut node = FieldSet::from_fields_v1(child)?;
            if node.children.is_empty() {
                node.member = true;
            }
            out.children.insert(element.clone(), node);
        }
        Ok(out)
    }
}

/// The encoded element of a field name.
pub fn field(name: &str) -> String {
    format!("f:{name}")
}

/// A path as the real server prints it in conflicts: `.spec.containers[name="a"].image`,
/// `.metadata.finalizers[="x"]`, `.args[0]`.
pub fn display(path: &[String]) -> String {
    let mut out = String::new();
    for element in path {
        let (kind, body) = element.split_at(2.min(element.len()));
        match kind {
            "f:" => {
                out.push('.');
                out.push_str(body);
            }
            "k:" => {
                let fields = serde_json::from_str::<Map<String, Value>>(body).unwrap_or_default();
                let listed: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
                out.push_str(&format!("[{}]", listed.join(",")));
            }
            "v:" => out.push_str(&format!("[={body}]")),
            _ => out.push_str(&format!("[{body}]")),
        }
    }
    out
}

#[cfg(test)]
#[path = "set_tests.rs"]
mod tests;
