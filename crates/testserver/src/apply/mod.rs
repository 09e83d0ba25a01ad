//! Server-side apply and field ownership (apiserver `fieldmanager`, structured-merge-diff v4):
//! `PATCH` with `application/apply-patch+yaml`, and `metadata.managedFields` kept by every write.
//!
//! What the real server does, and this module with it (each checked against v1.36):
//! - Every write records who set which fields. Create, update, merge/JSON/strategic patch and
//!   status writes are `Update` managers named by `?fieldManager=`, else by the `User-Agent` up
//!   to its first `/` (`curl/8.5` -> `curl`; kubectl sends `kubectl-create`, `kubectl-edit`, ...).
//!   A writer takes the fields it added or changed from every other manager; removed fields leave
//!   every set. A create is compared against the kind's zero value, so fields that Go types hold
//!   as pointers or maps (`labels`, `data`, `rollingUpdate`) carry a `"."` of their own.
//! - An apply (`fieldManager` required: 422 otherwise) merges the configuration into the live
//!   object by the schema ([`schema`]), makes the applier own exactly the fields it applied, and
//!   removes the fields it applied before and no longer does, unless another manager owns them.
//!   Changing a field another manager owns is a 409 conflict naming both ([`managed`]) unless
//!   `force=true`, which takes the field over. Applying a value equal to the live one shares the
//!   field instead. An apply to a missing object creates it (201).
//! - Status is a reset field of the main endpoint where the status subresource exists, and the
//!   status endpoint owns nothing but `status`; entries carry `subresource: status`.
//! - Each entry is in the API version its manager wrote through (a custom resource served in
//!   several versions; an `Update` manager has an entry per version): a write's changes are
//!   compared in every such version ([`Elsewhere`], the objects converted by
//!   `crate::handlers::versioned`), and each entry loses, or conflicts on, what changed in its
//!   own version, as structured-merge-diff compares the object converted to each manager's
//!   version. An apply among managers of several versions prunes as `Updater.prune` does,
//!   converting the partial objects it does (`crate::kinds::custom_resource::prune`, with the set
//!   operations of [`versions`]).
//!
//! # Differences from the real server
//! - No `ancient-changes` compaction of more than ten `Update` managers.
//! - A configuration the schema cannot type (an associative element without its key, duplicate
//!   keys, an object in a set) is a 500 naming the path, where the real server's message differs.

pub(crate) mod applier;
mod config;
pub(crate) mod managed;
pub(crate) mod merge;
pub(crate) mod schema;
mod versions;
pub(crate) mod writer;

use serde_json::Value;

pub(crate) use crate::apply::config::Config;
use crate::apply::managed::Entry;
use crate::apply::merge::{Comparison, WalkError, Walker};
use crate::apply::schema::{Node, Schemas};
use crate::apply::writer::Writer;
use crate::openapi::{GroupSchemas, crd::installed_in, kind_root};
use crate::registry::ResourceDefinition;
use crate::request::scope::Scope;
use crate::status::ApiError;
use crate::storage::State;
use kubegen_fieldpath::FieldSet;

/// Whether a write still has its managedFields to record, or an apply has set them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fields {
    /// Record the write as an `Update` manager.
    Track,
    /// A write through the `scale` subresource: an `Update` manager with `subresource: scale`
    /// (what v1.36 records for `kubectl scale`: `f:spec.f:replicas`).
    TrackScale,
    /// Set by [`Tracker::apply`].
    Applied,
}

/// The schemas of the kind a request writes, loaded under the state lock.
pub(crate) struct KindSchemas {
    schemas: Option<GroupSchemas>,
    builtin: bool,
}

impl KindSchemas {
    /// # Errors
    /// 500 when the shipped documents are unreadable.
    pub(crate) fn load(state: &State, def: &ResourceDefinition) -> Result<KindSchemas, ApiError> {
        let schemas = GroupSchemas::load((&def.group, &def.version), || installed_in(state))?;
        let builtin = matches!(schemas, Some(GroupSchemas::Builtin(_)));
        Ok(KindSchemas { schemas, builtin })
    }
}

/// Records a write in `next`'s managedFields as `fields` says: as an `Update` (through `scale`
/// for [`Fields::TrackScale`]), or not at all for an apply, whose merge recorded it already.
///
/// # Errors
/// 400 for malformed managedFields; 500 when the kind's schemas cannot be loaded.
pub(crate) fn record_write(
    state: &State,
    target: &Scope,
    fields: Fields,
    old: Option<&Value>,
    next: &mut Value,
) -> Result<(), ApiError> {
    if fields == Fields::Applied {
        return Ok(());
    }
    let schemas = KindSchemas::load(state, &target.def)?;
    let mut tracker = Tracker::new(&schemas, target);
    if fields == Fields::TrackScale {
        tracker = tracker.through("scale");
    }
    tracker.record_update(old, next, &[])
}

/// A write's changes in API versions other than a tracker's, by `apiVersion` (see the module
/// docs); empty for a kind served in one version.
pub(crate) type Elsewhere = [(String, Comparison)];

/// Field ownership for one write: the kind's schema, the endpoint and the writer.
pub(crate) struct Tracker<'a> {
    walker: Walker<'a>,
    root: Node<'a>,
    builtin: bool,
    api_version: String,
    subresource: String,
    status_subresource: bool,
    writer: &'a Writer,
    now: String,
}

impl<'a> Tracker<'a> {
    pub(crate) fn new(schemas: &'a KindSchemas, target: &'a Scope) -> Tracker<'a> {
        let def = &target.def;
        let components = schemas.schemas.as_ref().map(GroupSchemas::get);
        let root = components.and_then(|c| kind_root(c, (&def.group, &def.version, &def.kind)));
        Tracker {
            walker: Walker {
                schemas: Schemas { components },
            },
            root,
            builtin: schemas.builtin,
            api_version: def.api_version(),
            subresource: target.subresource.clone().unwrap_or_default(),
            status_subresource: def.status_subresource,
            writer: &target.writer,
            now: crate::object::now(),
        }
    }

    /// The same tracker for a write through `subresource` of the object it changes.
    pub(crate) fn through(mut self, subresource: &str) -> Tracker<'a> {
        self.subresource = subresource.to_string();
        self
    }

    /// What the real server compares a created object against.
    fn zero(&self) -> Value {
        if self.builtin {
            self.walker.schemas.zero_value(self.root)
        } else {
            Value::Object(Default::default())
        }
    }

    /// Records an `Update` from `old` (None: a create) to `next`, in `next`'s managedFields.
    /// managedFields the writer sent replace the old ones; absent, the old ones carry over.
    ///
    /// # Errors
    /// 400 for malformed managedFields.
    pub(crate) fn record_update(
        &self,
        old: Option<&Value>,
        next: &mut Value,
        elsewhere: &Elsewhere,
    ) -> Result<(), ApiError> {
        let sent = next.pointer("/metadata/managedFields");
        let before = match (sent, old) {
            (Some(_), _) => managed::decode(next)?,
            (None, Some(old)) => managed::decode(old)?,
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
    pub(crate) fn changes(&self, old: Option<&Value>, new: &Value) -> Option<Comparison> {
        let zero = self.zero();
        let old = managed::without_managed_fields(old.unwrap_or(&zero));
        self.compare(&old, &managed::without_managed_fields(new))
            .ok()
    }

    /// The changes `entry` settles against: those of its own API version.
    fn changes_for<'c>(
        &self,
        entry: &Entry,
        own: &'c Comparison,
        elsewhere: &'c Elsewhere,
    ) -> &'c Comparison {
        if entry.api_version == self.api_version {
            return own;
        }
        elsewhere
            .iter()
            .find(|(version, _)| *version == entry.api_version)
            .map_or(own, |(_, changes)| changes)
    }

    fn entry(&self, manager: &str, apply: bool) -> Entry {
        Entry {
            manager: manager.to_string(),
            apply,
            api_version: self.api_version.clone(),
            subresource: self.subresource.clone(),
            time: None,
            set: FieldSet::default(),
        }
    }

    fn finish(&self, object: &mut Value, mut entries: Vec<Entry>, before: &[Entry]) {
        managed::drop_empty(&mut entries);
        managed::stamp_times(&mut entries, before, &self.now);
        managed::store(object, entries);
    }

    /// Runs one walk from the root.
    fn walk<T>(
        &self,
        run: impl FnOnce(&Walker<'a>, &mut Vec<String>) -> Result<T, WalkError>,
    ) -> Result<T, WalkError> {
        run(&self.walker, &mut Vec::new())
    }

    /// Compares two versions as the real server sees them: with every struct the kind's Go
    /// types do not make pointers present, empty if nothing else (a stored Deployment without
    /// `status` has `status: {}` there).
    fn compare(&self, lhs: &Value, rhs: &Value) -> Result<Comparison, WalkError> {
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
    fn owned_part(&self, set: &FieldSet) -> FieldSet {
        let mut reset = FieldSet::default();
        for (element, _) in set.children() {
            let status = element == "f:status";
            let ignored = match self.subresource.as_str() {
                "status" => !status,
                _ => status && self.status_subresource,
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
#[path = "apply_tests.rs"]
mod tests;
