//! Jobs: the selector and labels v1.36 generates on create (`pkg/registry/batch/job/strategy.go`,
//! `PrepareForCreate` → `generateSelectorIfNeeded`), which need the uid the create just
//! stamped and so are not defaults (`builtin_defaults` fills those).
//!
//! Unless `spec.manualSelector` is true, the Pod template gets the labels
//! `batch.kubernetes.io/job-name` and `job-name` (the Job's name) and
//! `batch.kubernetes.io/controller-uid` and `controller-uid` (its uid), each unless already
//! set, and `spec.selector.matchLabels` gets `batch.kubernetes.io/controller-uid`. A Job
//! without labels of its own then carries its template's (`SetDefaults_Job`, which v1.36
//! applies again when it reads the stored Job back). Checked with `kubectl create
//! --dry-run=server` on v1.36.2.

use serde_json::{Map, Value, json};

use crate::kinds::strategy::Strategy;
use crate::status::ApiError;

/// The label selecting a Job's Pods by its uid.
const CONTROLLER_UID: &str = "batch.kubernetes.io/controller-uid";
/// The same, as labels were named before v1.27.
const LEGACY_CONTROLLER_UID: &str = "controller-uid";
/// The label naming a Job's Pods' Job.
const JOB_NAME: &str = "batch.kubernetes.io/job-name";
/// The same, as labels were named before v1.27.
const LEGACY_JOB_NAME: &str = "job-name";

/// The strategy of `batch/v1` `jobs`.
pub(crate) struct Jobs;

impl Strategy for Jobs {
    fn prepare_for_create(&self, object: &mut Map<String, Value>) -> Result<(), ApiError> {
        generate_selector(object);
        Ok(())
    }
}

/// `generateSelectorIfNeeded`, then the Job's labels defaulted from its template's.
fn generate_selector(object: &mut Map<String, Value>) {
    let text = |field: &str| {
        object
            .get("metadata")
            .and_then(|m| m.get(field))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let (name, uid) = (text("name"), text("uid"));
    let Some(Value::Object(spec)) = object.get_mut("spec") else {
        return;
    };
    if spec.get("manualSelector") != Some(&Value::Bool(true)) {
        if let Some(labels) = template_labels(spec) {
            for (key, value) in [
                (LEGACY_JOB_NAME, &name),
                (JOB_NAME, &name),
                (LEGACY_CONTROLLER_UID, &uid),
                (CONTROLLER_UID, &uid),
            ] {
                labels.entry(key).or_insert_with(|| json!(value));
            }
        }
        let selector = object_at(spec, "selector");
        if let Some(match_labels) = selector.and_then(|s| object_at(s, "matchLabels")) {
            match_labels
                .entry(CONTROLLER_UID)
                .or_insert_with(|| json!(uid));
        }
    }
    let template = object
        .get("spec")
        .and_then(|s| s.pointer("/template/metadata/labels"))
        .filter(|l| l.as_object().is_some_and(|l| !l.is_empty()))
        .cloned();
    let Some(Value::Object(metadata)) = object.get_mut("metadata") else {
        return;
    };
    let unlabelled = metadata
        .get("labels")
        .is_none_or(|l| l.as_object().is_none_or(Map::is_empty));
    if unlabelled && let Some(labels) = template {
        metadata.insert("labels".into(), labels);
    }
}

/// `spec.template.metadata.labels`, made an object when absent or null.
fn template_labels(spec: &mut Map<String, Value>) -> Option<&mut Map<String, Value>> {
    let template = object_at(spec, "template")?;
    let metadata = object_at(template, "metadata")?;
    object_at(metadata, "labels")
}

/// `map[key]` as an object, made one when absent or null; `None` when it holds something else
/// (validation refuses it as written).
fn object_at<'a>(map: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    let slot = map.entry(key).or_insert(Value::Null);
    if slot.is_null() {
        *slot = json!({});
    }
    slot.as_object_mut()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn created(spec: Value, labels: Option<Value>) -> Value {
        let mut metadata = json!({"name": "pi", "uid": "u-1"});
        if let Some(labels) = labels {
            metadata["labels"] = labels;
        }
        let Value::Object(mut object) = json!({"metadata": metadata, "spec": spec}) else {
            unreachable!("a literal object")
        };
        generate_selector(&mut object);
        Value::Object(object)
    }

    #[test]
    fn a_job_gets_the_generated_selector_and_its_template_labels() {
        let job = created(
            json!({"manualSelector": false, "template": {"metadata": {}}}),
            None,
        );
        let generated = json!({
            "batch.kubernetes.io/controller-uid": "u-1", "batch.kubernetes.io/job-name": "pi",
            "controller-uid": "u-1", "job-name": "pi"
        });
        assert_eq!(job["spec"]["template"]["metadata"]["labels"], generated);
        assert_eq!(job["metadata"]["labels"], generated);
        assert_eq!(
            job["spec"]["selector"],
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}})
        );
    }

    #[test]
    fn own_labels_are_kept_and_set_labels_are_not_overwritten() {
        let job = created(
            json!({"template": {"metadata": {"labels": {"job-name": "mine", "a": "b"}}}}),
            Some(json!({"team": "x"})),
        );
        assert_eq!(job["metadata"]["labels"], json!({"team": "x"}));
        assert_eq!(
            job["spec"]["template"]["metadata"]["labels"]["job-name"],
            "mine"
        );
        assert_eq!(job["spec"]["template"]["metadata"]["labels"]["a"], "b");
    }

    #[test]
    fn a_manual_selector_is_left_alone() {
        let spec = json!({"manualSelector": true, "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}}});
        let job = created(spec.clone(), None);
        assert_eq!(job["spec"], spec);
        assert_eq!(job["metadata"]["labels"], json!({"a": "b"}));
    }
}
