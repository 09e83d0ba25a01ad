//! [`Tracker`]: field ownership for one write (apiserver `fieldmanager.FieldManager`): an
//! `Update` recorded in `metadata.managedFields`, the fields a write changed, and the shared
//! steps of an apply (`applier.rs`).
//!
//! What the real server does, and the tracker with it (each checked against v1.36):
//! - Every write records who set which fields. Create, update, merge/JSON/strategic patch and
//!   status writes are `Update` managers named by the [`Writer`]. A writer takes the fields it
//!   added or changed from every other manager; removed fields leave every set. A create is
//!   compared against the kind's zero value, so fields that Go types hold as pointers or maps
//!   (`labels`, `data`, `rollingUpdate`) carry a `"."` of their own.
//! - Status is a reset field of the main endpoint where the status subresource exists, and the
//!   status endpoint owns nothing but `status`; entries carry `subresource: status`.
//! - Each entry is in the API version its manager wrote through (a custom resource served in
//!   several versions; an `Update` manager has an entry per version): a write's changes are
//!   compared in every such version ([`Elsewhere`], the objects converted by the server), and
//!   each entry loses, or conflicts on, what changed in its own version, as structured-merge-diff
//!   compares the object converted to each manager's version.

use serde_json::Value;

use crate::error::Error;
use crate::managed::{self, Entry};
use crate::merge::{Comparison, WalkError, Walker};
use crate::schema::{Node, Schema};
use crate::writer::Writer;
use kubegen_fieldpath::FieldSet;

/// A write's changes in API versions other than a tracker's, by `apiVersion` (see the module
/// docs); empty for a kind served in one version.
pub type Elsewhere = [(String, Comparison)];

/// The endpoint a write goes through: what decides which fields its managers can own.
#[derive(Clone, Debug, Default)]
pub struct Endpoint {
    /// The API version the write names, `group/version` (`v1` for the core group).
    pub api_version: String,
    /// `""`, `status` or `scale`.
    pub subresource: String,
    /// Whether the kind has a status subresource (then `status` is reset on the main endpoint).
    pub status_subresource: bool,
}

/// Field ownership for one write: the kind's schema, the endpoint and the writer.
pub struct Tracker<'a> {
    pub(crate) walker: Walker<'a>,
    pub(crate) root: Node<'a>,
    go_zero_value: bool,
    pub(crate) endpoint: Endpoint,
    pub(crate) writer: &'a Writer,
    /// The time entries whose set changes are stamped with (RFC 3339, seconds).
    now: String,
}

impl<'a> Tracker<'a> {
    /// The tracker of a write by `writer` through `endpoint` of a kind of `schema`, at `now`
    /// (`2026-01-01T00:00:00Z`, what changed entries are stamped with).
    pub fn new(schema: Schema<'a>, endpoint: Endpoint, writer: &'a Writer, now: &str) -> Self {
        Tracker {
            walker: Walker {
                schemas: schema.schemas,
            },
            root: schema.root,
            go_zero_value: schema.go_zero_value,
            endpoint,
            writer,
            now: now.to_owned(),
        }
    }

    /// The same tracker for a write through `subresource` of the object it changes.
    pub fn through(mut self, subresource: &str) -> Tracker<'a> {
        self.endpoint.subresource = subresource.to_string();
        self
    }

    /// What the real server compares a created object against.
    pub(crate) fn zero(&self) -> Value {
        if self.go_zero_value {
            self.walker.schemas.zero_value(self.root)
        } else {
            Value::Object(Default::default())
        }
    }

    /// Records an `Update` from `old` (None: a create) to `next`, in `next`'s managedFields.
    /// managedFields the writer sent replace the old ones; absent, the old ones carry over.
    ///
    /// # Errors
    /// [`Error::InvalidManagedFields`].
    pub fn record_update(
        &self,
        old: Option<&Value>,
        next: &mut Value,
        elsewhere: &Elsewhere,
    ) -> Result<(), Error> {
        let sent = next.pointer("/metadata/managedFields");
        let before = match (sent, old) {
            (Some(_), _) => managed::managed_fields(next)?,
            (None, Some(old)) => managed::managed_fields(old)?,
            (None, None) => Vec::new(),
        };
        let Some(changes) = self.changes(old, next) else {
            // An object the schema cannot type loses its managedFields, as the real server's
            // `UpdateNoErrors` answers a failed update of them.
            managed::store(next, Vec::new());
            return Ok(());
        };
        let mut entries = before.clone();
        for entry in &mut entries {
            let own = self.changes_for(entry, &changes, elsewhere);
            entry.set = entry
                .set
                .difference(&own.touched())
                .difference(&own.removed);
        }
        let touched = changes.touched();
        let mine = self.entry(self.writer.manager(), false);
        let previous = before.iter().find(|e| e.same_manager(&mine));
        let set = previous
            .map_or_else(FieldSet::default, |e| e.set.clone())
            .union(&touched)
            .difference(&changes.removed);
        entries.retain(|e| !e.same_manager(&mine));
        entries.push(Entry { set, ..mine });
        self.finish(next, entries, &before);
        Ok(())
    }

    /// The fields a write from `old` (None: a create, compared against the kind's zero value)
    /// to `new` added, changed and removed, in this tracker's version; `None` when the schema
    /// cannot type them.
    pub fn changes(&self, old: Option<&Value>, new: &Value) -> Option<Comparison> {
        let zero = self.zero();
        let old = managed::without_managed_fields(old.unwrap_or(&zero));
        self.compare(&old, &managed::without_managed_fields(new))
            .ok()
    }

    /// The changes `entry` settles against: those of its own API version.
    pub(crate) fn changes_for<'c>(
        &self,
        entry: &Entry,
        own: &'c Comparison,
        elsewhere: &'c Elsewhere,
    ) -> &'c Comparison {
        if entry.api_version == self.endpoint.api_version {
            return own;
        }
        elsewhere
            .iter()
            .find(|(version, _)| *version == entry.api_version)
            .map_or(own, |(_, changes)| changes)
    }

    pub(crate) fn entry(&self, manager: &str, apply: bool) -> Entry {
        Entry {
            manager: manager.to_string(),
            apply,
            api_version: self.endpoint.api_version.clone(),
            subresource: self.endpoint.subresource.clone(),
            time: None,
            set: FieldSet::default(),
        }
    }

    pub(crate) fn finish(&self, object: &mut Value, mut entries: Vec<Entry>, before: &[Entry]) {
        managed::drop_empty(&mut entries);
        managed::stamp_times(&mut entries, before, &self.now);
        managed::store(object, entries);
    }

    /// Runs one walk from the root.
    pub(crate) fn walk<T>(
        &self,
        run: impl FnOnce(&Walker<'a>, &mut Vec<String>) -> Result<T, WalkError>,
    ) -> Result<T, WalkError> {
        run(&self.walker, &mut Vec::new())
    }

    /// Compares two versions as the real server sees them: with every struct the kind's Go
    /// types do not make pointers present, empty if nothing else (a stored Deployment without
    /// `status` has `status: {}` there).
    pub(crate) fn compare(&self, lhs: &Value, rhs: &Value) -> Result<Comparison, WalkError> {
        let zero = self.zero();
        let (lhs, rhs) = (&with_zero(lhs, &zero), &with_zero(rhs, &zero));
        let mut out = Comparison::default();
        self.walk(|w, path| w.compare(self.root, (Some(lhs), Some(rhs)), path, &mut out))?;
        Ok(Comparison {
            added: self.owned_part(&out.added),
            modified: self.owned_part(&out.modified),
            removed: self.owned_part(&out.removed),
        })
    }

    /// `set` without what no manager of this endpoint records: the stripped metadata, and the
    /// reset fields (`status` on the main endpoint of a kind with a status subresource,
    /// everything but `status` on the status endpoint).
    pub(crate) fn owned_part(&self, set: &FieldSet) -> FieldSet {
        let mut reset = FieldSet::default();
        for (element, _) in set.children() {
            let status = element == "f:status";
            let ignored = match self.endpoint.subresource.as_str() {
                "status" => !status,
                _ => status && self.endpoint.status_subresource,
            };
            if ignored {
                reset.insert(std::slice::from_ref(element));
            }
        }
        set.without_subtrees(&reset)
            .difference(&managed::stripped())
    }
}

/// `value` with the empty structs of `zero` it lacks.
fn with_zero(value: &Value, zero: &Value) -> Value {
    let mut out = value.clone();
    if let (Some(map), Some(zero)) = (out.as_object_mut(), zero.as_object()) {
        for (key, empty) in zero {
            let filled = match map.get(key) {
                Some(present) => with_zero(present, empty),
                None => empty.clone(),
            };
            map.insert(key.clone(), filled);
        }
    }
    out
}

#[cfg(test)]
#[path = "tracker_tests.rs"]
mod tests;
