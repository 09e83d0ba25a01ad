//! A server-side apply's steps (structured-merge-diff `Updater.Apply`): the configuration merged
//! into the live object, what its manager stopped applying pruned, then every manager settled
//! (ownership taken, conflicts). Split so that a custom resource whose managers wrote through
//! several versions can convert between the steps (`crate::handlers::versioned`).

use serde_json::Value;

use crate::apply::managed::{self, Entry};
use crate::apply::merge::{Comparison, WalkError};
use crate::apply::{Config, Elsewhere, Tracker};
use crate::status::ApiError;
use kubegen_fieldpath::FieldSet;

/// An apply's configuration merged into the live object, before the managers settle
/// ([`Tracker::settle`]).
pub(crate) struct Merged {
    /// The merged object, without managedFields.
    pub(crate) object: Value,
    live: Option<Value>,
    applied: FieldSet,
    mine: Entry,
    before: Vec<Entry>,
    ident: String,
}

impl Merged {
    /// The applier's entry before this apply: what it applied last time, if it did.
    pub(crate) fn last(&self) -> Option<&Entry> {
        self.before.iter().find(|e| e.same_manager(&self.mine))
    }

    /// Every manager's entry with this apply made: the applier's owns what it applies now.
    pub(crate) fn managers(&self) -> Vec<Entry> {
        let others = self.before.iter().filter(|e| !e.same_manager(&self.mine));
        let mine = Entry {
            set: self.applied.clone(),
            ..self.mine.clone()
        };
        others.cloned().chain([mine]).collect()
    }
}

impl Tracker<'_> {
    /// Applies `config` over `live` (None: the object does not exist) for `manager`, with
    /// `force`: [`Tracker::merge`], [`Tracker::prune`], then [`Tracker::settle`] with the
    /// managers of this version. Returns the object to store, managedFields included.
    ///
    /// # Errors
    /// As [`Tracker::merge`] and [`Tracker::settle`].
    pub(crate) fn apply(
        &self,
        live: Option<&Value>,
        config: &Config,
        manager: &str,
    ) -> Result<Value, ApiError> {
        let mut merged = self.merge(live, config, manager)?;
        self.prune(&mut merged)?;
        self.settle(merged, &[])
    }

    /// Merges `config` into `live` for `manager`: the configuration's fields set, and what the
    /// endpoint cannot change put back.
    ///
    /// # Errors
    /// 400 for malformed managedFields or a configuration that sets them, 500 for a
    /// configuration the schema cannot type (`failed to create typed patch object
    /// (ns/name; group/version, Kind=kind): .spec.items: element 0: ...`, worded as v1.36).
    pub(crate) fn merge(
        &self,
        live: Option<&Value>,
        config: &Config,
        manager: &str,
    ) -> Result<Merged, ApiError> {
        if config.value.pointer("/metadata/managedFields").is_some() {
            return Err(ApiError::bad_request("metadata.managedFields must be nil"));
        }
        let before = live.map(managed::decode).transpose()?.unwrap_or_default();
        // A new object merges into nothing but compares against the kind's zero value.
        let live = live.map(managed::without_managed_fields);
        let start = live
            .clone()
            .unwrap_or_else(|| Value::Object(Default::default()));
        let typing = |e| typing(&config.ident, e);
        let config_value = &config.value;
        let mut object = self
            .walk(|w, path| w.merge(self.root, Some(&start), config_value, path))
            .map_err(typing)?;
        let mut applied = FieldSet::default();
        self.walk(|w, path| w.to_set(self.root, config_value, path, &mut applied))
            .map_err(typing)?;
        self.reset(&start, &mut object);
        Ok(Merged {
            object,
            live,
            applied: self.owned_part(&applied),
            mine: self.entry(manager, true),
            before,
            ident: config.ident.clone(),
        })
    }

    /// Removes from the merged object the fields its applier applied last time and no longer
    /// does, unless another manager owns them (managers of other versions by the same paths:
    /// `crate::handlers::versioned` prunes across versions as the real server does).
    ///
    /// # Errors
    /// 500 for an object the schema cannot type.
    pub(crate) fn prune(&self, merged: &mut Merged) -> Result<(), ApiError> {
        let Some(last) = merged.last() else {
            return Ok(());
        };
        let others = merged
            .before
            .iter()
            .filter(|e| !e.same_manager(&merged.mine))
            .fold(FieldSet::default(), |all, e| all.union(&e.set));
        let keep = merged.applied.union(&others);
        let remove = last.set.difference(&keep);
        let object = &mut merged.object;
        self.walk(|w, path| w.remove(self.root, object, (&remove, Some(&keep)), path))
            .map_err(|e| typing(&merged.ident, e))
    }

    /// The merged object with its managedFields: the applier owns what it applied; every other
    /// manager conflicts on (without `force`) or loses what changed in its own version
    /// (`elsewhere` for versions other than this tracker's).
    ///
    /// # Errors
    /// 409 on conflicts without `force`, 500 for an object the schema cannot type.
    pub(crate) fn settle(&self, merged: Merged, elsewhere: &Elsewhere) -> Result<Value, ApiError> {
        let Merged {
            mut object,
            live,
            applied,
            mine,
            before,
            ident,
        } = merged;
        let zero = self.zero();
        let changes = self
            .compare(live.as_ref().unwrap_or(&zero), &object)
            .map_err(|e| typing(&ident, e))?;
        let mut entries = self.take_changed_fields(&before, &mine, &changes, elsewhere)?;
        entries.push(Entry {
            set: applied,
            ..mine
        });
        self.finish(&mut object, entries, &before);
        Ok(object)
    }

    /// The other managers' entries once the applier took the fields it changed: a 409 naming
    /// them without `force`; with it, they lose those fields (and everyone loses removed ones).
    fn take_changed_fields(
        &self,
        before: &[Entry],
        mine: &Entry,
        changes: &Comparison,
        elsewhere: &Elsewhere,
    ) -> Result<Vec<Entry>, ApiError> {
        let others = before.iter().filter(|e| !e.same_manager(mine));
        let conflicts: Vec<(&Entry, FieldSet)> = others
            .clone()
            .map(|e| {
                let touched = self.changes_for(e, changes, elsewhere).touched();
                (e, e.set.intersection(&touched))
            })
            .filter(|(_, set)| !set.is_empty())
            .collect();
        if !conflicts.is_empty() && !self.writer.force {
            return Err(managed::conflict_error(&conflicts));
        }
        Ok(others
            .cloned()
            .map(|mut e| {
                let own = self.changes_for(&e, changes, elsewhere);
                e.set = e.set.difference(&own.touched()).difference(&own.removed);
                e
            })
            .collect())
    }

    /// What the endpoint cannot change, put back from `live`.
    fn reset(&self, live: &Value, merged: &mut Value) {
        let (Some(live), Some(out)) = (live.as_object(), merged.as_object_mut()) else {
            return;
        };
        let keep_status = self.subresource == "status";
        if !keep_status && !self.status_subresource {
            return;
        }
        let keys: Vec<String> = live.keys().chain(out.keys()).cloned().collect();
        for key in keys {
            let ignored = match keep_status {
                true => key != "status" && key != "metadata",
                false => key == "status",
            };
            if !ignored {
                continue;
            }
            match live.get(&key) {
                Some(v) => out.insert(key, v.clone()),
                None => out.remove(&key),
            };
        }
    }
}

/// The 500 for an apply the schema cannot type.
fn typing(ident: &str, error: WalkError) -> ApiError {
    let message = format!("failed to create typed patch object ({ident}): {error}");
    ApiError::unknown(500, message)
}
