//! The set operations structured-merge-diff's `Updater.prune` runs in each managers' version
//! when an apply's managers wrote through several API versions (`ToFieldSet`, `RemoveItems`,
//! `EnsureNamedFieldsAreMembers`); the conversions between the versions, and the order of the
//! steps, are the server's (the test server's `kinds/custom_resource/prune.rs`).

use serde_json::Value;

use crate::error::Error;
use crate::schema::Node;
use crate::tracker::Tracker;
use kubegen_fieldpath::FieldSet;

impl Tracker<'_> {
    /// Every field `value` sets (`ToFieldSet`).
    ///
    /// # Errors
    /// [`Error::Untyped`] for a value the schema cannot type.
    pub fn field_set(&self, value: &Value) -> Result<FieldSet, Error> {
        let mut set = FieldSet::default();
        self.walk(|w, path| w.to_set(self.root, value, path, &mut set))
            .map_err(Error::Untyped)?;
        Ok(set)
    }

    /// `set` with every field its paths pass through that the schema declares a member too
    /// (`EnsureNamedFieldsAreMembers`: a set owning `spec.cpu` owns `spec`, one owning a map's
    /// key does not own the map's entry).
    pub fn with_named_fields(&self, set: &FieldSet) -> FieldSet {
        let mut out = set.clone();
        self.named_fields(self.root, set, &mut Vec::new(), &mut out);
        out
    }

    fn named_fields(
        &self,
        node: Node<'_>,
        set: &FieldSet,
        path: &mut Vec<String>,
        out: &mut FieldSet,
    ) {
        let schema = self.walker.schemas.resolve(node);
        let field = |key: &str| schema.and_then(|s| s.get(key));
        for (element, subtree) in set.children() {
            path.push(element.clone());
            let child = match element.strip_prefix("f:") {
                Some(name) => {
                    let declared = field("properties").and_then(|p| p.get(name));
                    if declared.is_some() {
                        out.insert(path);
                    }
                    declared.or_else(|| field("additionalProperties"))
                }
                None => field("items"),
            };
            self.named_fields(child, subtree, path, out);
            path.pop();
        }
    }

    /// `value` without the members of `set` (`RemoveItems`).
    ///
    /// # Errors
    /// [`Error::Untyped`] for a value the schema cannot type.
    pub fn without(&self, value: &Value, set: &FieldSet) -> Result<Value, Error> {
        let mut out = value.clone();
        self.walk(|w, path| w.remove(self.root, &mut out, (set, None), path))
            .map_err(Error::Untyped)?;
        Ok(out)
    }
}
