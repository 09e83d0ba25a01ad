//! `metadata.managedFields`: one entry per manager (apiserver `fieldmanager/internal`
//! `managedfields.go`, `conflict.go`).
//!
//! A manager is identified by its name, operation and subresource, and for `Update` managers also
//! by the API version it wrote through (appliers keep one entry across versions, as
//! `BuildManagerIdentifier` has it). Entries are serialized sorted as the real server sorts them:
//! `Apply` before `Update`, then by time, manager, API version and subresource.

use serde_json::{Value, json};

use crate::error::{Conflict, Error};
use kubegen_fieldpath::FieldSet;

/// One `managedFields` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The field manager's name.
    pub manager: String,
    /// `Apply` (true) or `Update`.
    pub apply: bool,
    /// The API version the manager wrote through, `group/version`.
    pub api_version: String,
    /// `""`, `status` or `scale`.
    pub subresource: String,
    /// When the entry's set last changed (RFC 3339, seconds); None for a manager of `scale`.
    pub time: Option<String>,
    /// The fields the manager owns.
    pub set: FieldSet,
}

impl Entry {
    /// Whether `self` and `other` are the same manager.
    pub fn same_manager(&self, other: &Entry) -> bool {
        self.manager == other.manager
            && self.apply == other.apply
            && self.subresource == other.subresource
            && (self.apply || self.api_version == other.api_version)
    }

    /// The manager as conflicts name it (apiserver `printManager`): `"m"`, `"m" with subresource
    /// "status"`, and for an `Update` manager ` using <apiVersion>` after that.
    pub fn describe(&self) -> String {
        let mut out = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            out.push_str(&format!(" with subresource {:?}", self.subresource));
        }
        if !self.apply {
            out.push_str(&format!(" using {}", self.api_version));
        }
        out
    }

    fn to_json(&self) -> Value {
        let mut entry = json!({
            "manager": self.manager,
            "operation": if self.apply { "Apply" } else { "Update" },
            "apiVersion": self.api_version,
            "fieldsType": "FieldsV1",
            "fieldsV1": self.set.to_fields_v1(),
        });
        if let Some(time) = &self.time {
            entry["time"] = time.clone().into();
        }
        if !self.subresource.is_empty() {
            entry["subresource"] = self.subresource.clone().into();
        }
        entry
    }

    fn from_json(value: &Value) -> Result<Entry, String> {
        let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default();
        let apply = match text("operation") {
            "Apply" => true,
            "Update" => false,
            other => return Err(format!("operation: unknown value {other:?}")),
        };
        if text("fieldsType") != "FieldsV1" {
            return Err(format!(
                "fieldsType: expected \"FieldsV1\", found {:?}",
                text("fieldsType")
            ));
        }
        let fields = value.get("fieldsV1").cloned().unwrap_or(json!({}));
        Ok(Entry {
            manager: text("manager").to_string(),
            apply,
            api_version: text("apiVersion").to_string(),
            subresource: text("subresource").to_string(),
            time: value.get("time").and_then(Value::as_str).map(String::from),
            set: FieldSet::from_fields_v1(&fields).map_err(|e| format!("fieldsV1: {e}"))?,
        })
    }
}

/// The entries of `object`'s `metadata.managedFields` (none when absent).
///
/// # Errors
/// [`Error::InvalidManagedFields`] naming the malformed entry, as the real server rejects
/// managedFields it cannot decode.
pub fn managed_fields(object: &Value) -> Result<Vec<Entry>, Error> {
    let Some(list) = object.pointer("/metadata/managedFields") else {
        return Ok(Vec::new());
    };
    let Some(items) = list.as_array() else {
        return Err(Error::InvalidManagedFields(
            "metadata.managedFields: expected a list".into(),
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            Entry::from_json(item).map_err(|e| {
                Error::InvalidManagedFields(format!("metadata.managedFields[{i}].{e}"))
            })
        })
        .collect()
}

/// The `managedFields` list of `entries`, in the real server's order.
pub(crate) fn encode(mut entries: Vec<Entry>) -> Value {
    entries.sort_by(|a, b| {
        (
            !a.apply,
            &a.time,
            &a.manager,
            &a.api_version,
            &a.subresource,
        )
            .cmp(&(
                !b.apply,
                &b.time,
                &b.manager,
                &b.api_version,
                &b.subresource,
            ))
    });
    Value::Array(entries.iter().map(Entry::to_json).collect())
}

/// The conflict of an apply whose changes touch fields of other managers
/// ([`Error::Conflicts`]), sorted by manager and path.
pub(crate) fn conflict_error(conflicts: &[(&Entry, FieldSet)]) -> Error {
    let mut listed: Vec<Conflict> = conflicts
        .iter()
        .flat_map(|(entry, set)| {
            let manager = entry.describe();
            set.paths()
                .into_iter()
                .map(move |path| Conflict::new(manager.clone(), &path))
        })
        .collect();
    listed.sort();
    Error::Conflicts(listed)
}

/// The paths no manager records (apiserver `stripMeta`): type meta and the metadata the server
/// sets.
pub(crate) fn stripped() -> FieldSet {
    let mut set = FieldSet::default();
    for path in ["apiVersion", "kind", "metadata"] {
        set.insert(&[format!("f:{path}")]);
    }
    for field in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        set.insert(&["f:metadata".to_string(), format!("f:{field}")]);
    }
    set
}

/// `metadata.managedFields` of `object` set to `entries` (removed when there are none).
pub(crate) fn store(object: &mut Value, entries: Vec<Entry>) {
    let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    if entries.is_empty() {
        meta.remove("managedFields");
    } else {
        meta.insert("managedFields".into(), encode(entries));
    }
}

/// `object` without `metadata.managedFields`.
pub(crate) fn without_managed_fields(object: &Value) -> Value {
    let mut copy = object.clone();
    if let Some(meta) = copy.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    copy
}

/// Keeps each entry's time when its set did not change since `before`, and stamps `now` on the
/// others. A manager of `scale` has none: the real server rebuilds its entry from the Scale's
/// without one (`ScaleHandler.ToParent`).
pub(crate) fn stamp_times(entries: &mut [Entry], before: &[Entry], now: &str) {
    for entry in entries {
        if entry.subresource == "scale" {
            entry.time = None;
            continue;
        }
        let unchanged = before
            .iter()
            .find(|old| old.same_manager(entry))
            .filter(|old| old.set == entry.set);
        entry.time = Some(unchanged.map_or_else(
            || now.to_string(),
            |old| old.time.clone().unwrap_or_else(|| now.to_string()),
        ));
    }
}

/// Keeps the entries that still own something.
pub(crate) fn drop_empty(entries: &mut Vec<Entry>) {
    entries.retain(|e| !e.set.is_empty());
}

#[cfg(test)]
#[path = "managed_tests.rs"]
mod tests;
