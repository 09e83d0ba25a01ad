//! An apply's pruning when the managers of a custom resource wrote through several versions:
//! structured-merge-diff's `Updater.prune` (`addBackOwnedItems`, `addBackDanglingItems`) with
//! every conversion it makes, through the CRD's webhook.
//!
//! # Why
//! What the applier applied last time and no longer does is removed unless another manager
//! owns it, and the owners are known in their own versions only. So the real server removes
//! every field of the last applied set (and the struct fields above them) from the merged object
//! in the last applied version, then, version by version (that one first), converts the pruned
//! object there and adds back what the managers of that version own; what is still missing and
//! was in the last applied set is gone. The objects converted on the way are *partial*: a
//! conversion webhook that cannot convert an object without its required fields fails the apply
//! with 500 `failed to prune fields: failed add back owned items: failed to convert pruned object
//! at version <group/version>: <conversion failure>`, as v1.36 does (kubegen's own
//! `HubConversion` does, `codegen/generated-tests/.../conversion_patches.rs`).
//!
//! An apply whose managers are all of its own version prunes in that version alone
//! (`kubegen_apply::Tracker::prune`), converting nothing.

use kubegen_apply::{Entry, Merged};
use kubegen_fieldpath::FieldSet;
use serde_json::Value;

use crate::kinds::custom_resource::edge::Edge;
use crate::kinds::custom_resource::managers::VersionSchemas;
use crate::status::ApiError;

impl Edge {
    /// Prunes the merged object of an apply (see the module docs).
    ///
    /// # Errors
    /// 500 when a conversion fails or an object cannot be typed.
    pub(crate) async fn prune(
        &self,
        schemas: &VersionSchemas,
        merged: &mut Merged,
    ) -> Result<(), ApiError> {
        let tracker = schemas.request_tracker(self)?;
        let Some(last) = merged.last().filter(|last| !last.set.is_empty()).cloned() else {
            return Ok(());
        };
        let managers = merged.managers();
        let ours = self.versions.api_version(self.request_version());
        if managers
            .iter()
            .chain([&last])
            .all(|e| e.api_version == ours)
        {
            return Ok(tracker.prune(merged)?);
        }
        let pruned = self
            .prune_across(schemas, &merged.object, &last, &managers)
            .await
            .map_err(|why| ApiError::unknown(500, format!("failed to prune fields: {why}")))?;
        merged.object = pruned;
        Ok(())
    }

    /// `Updater.prune` of `merged` (in the request's version) for the applier's `last` entry,
    /// the `managers` being every entry once the apply is made.
    async fn prune_across(
        &self,
        schemas: &VersionSchemas,
        merged: &Value,
        last: &Entry,
        managers: &[Entry],
    ) -> Result<Value, String> {
        // The last applied version is no longer served: nothing to prune, as the real server
        // answers a missing version.
        let Some((version, tracker)) = self
            .version_of(&last.api_version)
            .and_then(|v| Some((v, schemas.tracker(v)?)))
        else {
            return Ok(merged.clone());
        };
        let convert = |object: Value, version: String| async move {
            let converted = self.versions.convert_one(object, &version).await;
            converted.map_err(|e| e.message)
        };
        let converted = convert(merged.clone(), version.to_owned())
            .await
            .map_err(|e| format!("failed to convert merged object to last applied version: {e}"))?;
        let named = tracker.with_named_fields(&last.set);
        let untyped = |e: kubegen_apply::Error| e.to_string();
        let mut pruned = tracker.without(&converted, &named).map_err(untyped)?;
        let mut merged_there = converted.clone();
        for (there, managed) in self.managed_at(version, managers) {
            let Some(tracker) = schemas.tracker(&there) else {
                continue;
            };
            let at = |what: &str, e: String| {
                let api_version = self.versions.api_version(&there);
                format!(
                    "failed add back owned items: failed to convert {what} object at version {api_version}: {e}"
                )
            };
            merged_there = convert(merged_there, there.clone())
                .await
                .map_err(|e| at("merged", e))?;
            pruned = convert(pruned, there.clone())
                .await
                .map_err(|e| at("pruned", e))?;
            let all =
                tracker.with_named_fields(&tracker.field_set(&merged_there).map_err(untyped)?);
            let kept = tracker.with_named_fields(&tracker.field_set(&pruned).map_err(untyped)?);
            let keep = kept.union(&tracker.with_named_fields(&managed));
            pruned = tracker
                .without(&merged_there, &all.difference(&keep))
                .map_err(untyped)?;
        }
        let pruned = convert(pruned, version.to_owned()).await.map_err(|e| {
            format!("failed add back dangling items: failed to convert pruned object to last applied version: {e}")
        })?;
        let gone = tracker
            .field_set(&converted)
            .map_err(untyped)?
            .difference(&tracker.field_set(&pruned).map_err(untyped)?);
        let result = tracker
            .without(&converted, &gone.intersection(&last.set))
            .map_err(untyped)?;
        convert(result, self.request_version().to_owned()).await
    }

    /// The union of the managers' sets per version, `first` first, then in the CRD's order.
    fn managed_at(&self, first: &str, managers: &[Entry]) -> Vec<(String, FieldSet)> {
        let mut order = vec![first.to_owned()];
        order.extend(self.versions.served.iter().filter(|v| *v != first).cloned());
        order
            .into_iter()
            .filter_map(|version| {
                let api_version = self.versions.api_version(&version);
                let mut owners = managers
                    .iter()
                    .filter(|e| e.api_version == api_version)
                    .peekable();
                owners.peek()?;
                let set = owners.fold(FieldSet::default(), |all, e| all.union(&e.set));
                Some((version, set))
            })
            .collect()
    }
}
