//! A server-side apply's steps (structured-merge-diff `Updater.Apply`): the configuration merged
//! into the live object, what its manager stopped applying pruned, then every manager settled
//! (ownership taken, conflicts). Split so that a server can convert between the steps for a
//! custom resource whose managers wrote through several versions (the test server's
//! `handlers/versioned.rs`).
//!
//! An apply (the server requires a `fieldManager`: [`crate::Writer::applier`]) merges the
//! configuration into the live object by the schema, makes the applier own exactly the fields it
//! applied, and removes the fields it applied before and no longer does, unless another manager
//! owns them. Changing a field another manager owns is a conflict naming both unless `force`,
//! which takes the field over. Applying a value equal to the live one shares the field instead.
//! An apply to a missing object creates it.

use serde_json::Value;

use crate::config::Config;
use crate::error::Error;
use crate::managed::{self, Entry};
use crate::merge::{Comparison, WalkError};
use crate::tracker::{Elsewhere, Tracker};
use kubegen_fieldpath::FieldSet;

/// An apply's configuration merged into the live object, before the managers settle
/// ([`Tracker::settle`]).
pub struct Merged {
    /// The merged object, without managedFields.
    pub object: Value,
    live: Option<Value>,
    applied: FieldSet,
    mine: Entry,
    before: Vec<Entry>,
    ident: String,
}

impl Merged {
    /// The applier's entry before this apply: what it applied last time, if it did.
    pub fn last(&self) -> Option<&Entry> {
        self.before.iter().find(|e| e.same_manager(&self.mine))
    }

    /// Every manager's entry with this apply made: the applier's owns what it applies now.
    pub fn managers(&self) -> Vec<Entry> {
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
    pub fn apply(
        &self,
        live: Option<&Value>,
        config: &Config,
        manager: &str,
    ) -> Result<Value, Error> {
        let mut merged = self.merge(live, config, manager)?;
        self.prune(&mut merged)?;
        self.settle(merged, &[])
    }

    /// Merges `config` into `live` for `manager`: the configuration's fields set, and what the
    /// endpoint cannot change put back.
    ///
    /// # Errors
    /// [`Error::InvalidManagedFields`], [`Error::ManagedFieldsInConfiguration`], and
    /// [`Error::UntypedConfiguration`] for a configuration the schema cannot type
    /// (`failed to create typed patch object (ns/name; group/version, Kind=kind): .spec.items:
    /// element 0: ...`, worded as v1.36).
    pub fn merge(
        &self,
        live: Option<&Value>,
        config: &Config,
        manager: &str,
    ) -> Result<Merged, Error> {
        if config.value.pointer("/metadata/managedFields").is_some() {
            return Err(Error::ManagedFieldsInConfiguration);
        }
        let before = live
            .map(managed::managed_fields)
            .transpose()?
            .unwrap_or_default();
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
    /// does, unless another manager owns them (managers of other versions by the same paths: a
    /// server prunes across versions as the real server does with `crate::Tracker::field_set`,
    /// `with_named_fields` and `without`).
    ///
    /// # Errors
    /// [`Error::UntypedConfiguration`] for an object the schema cannot type.
    pub fn prune(&self, merged: &mut Merged) -> Result<(), Error> {
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
    /// [`Error::Conflicts`] without `force`, [`Error::UntypedConfiguration`] for an object the
    /// schema cannot type.
    pub fn settle(&self, merged: Merged, elsewhere: &Elsewhere) -> Result<Value, Error> {
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

    /// The other managers' entries once the applier took the fields it changed: conflicts naming
    /// them without `force`; with it, they lose those fields (and everyone loses removed ones).
    fn take_changed_fields(
        &self,
        before: &[Entry],
        mine: &Entry,
        changes: &Comparison,
        elsewhere: &Elsewhere,
    ) -> Result<Vec<Entry>, Error> {
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
        let keep_status = self.endpoint.subresource == "status";
        if !keep_status && !self.endpoint.status_subresource {
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

/// An apply the schema cannot type.
fn typing(ident: &str, reason: WalkError) -> Error {
    Error::UntypedConfiguration {
        object: ident.to_owned(),
        reason,
    }
}
