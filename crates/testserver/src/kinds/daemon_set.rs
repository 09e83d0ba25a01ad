//! DaemonSets: the template generation v1.36 keeps in the `deprecated.daemonset.template.generation`
//! annotation (`pkg/registry/apps/daemonset/strategy.go`, `PrepareForCreate` and
//! `PrepareForUpdate`; the annotation is the internal `spec.templateGeneration` as
//! `pkg/apis/apps/v1/conversion.go` writes it out). The daemonset controller labels each Pod
//! with it (`pod-template-generation`).
//!
//! # Rules (checked with kubectl on v1.36.2)
//! - Create: a given generation of at least 1 is kept, anything lower becomes 1, none becomes 1.
//! - Update: the stored generation is kept, whatever the request says, and raised by one when
//!   the Pod template changed.
//! - A value that is not an integer is refused with 400 BadRequest, as the real server's codec
//!   refuses it ("DaemonSet in version \"v1\" cannot be handled as a DaemonSet:
//!   strconv.ParseInt: parsing \"abc\": invalid syntax").

use std::num::IntErrorKind;

use serde_json::{Map, Value};

use crate::kinds::strategy::Strategy;
use crate::request::scope::Scope;
use crate::status::ApiError;
use crate::storage::State;

/// The annotation holding the template generation.
const ANNOTATION: &str = "deprecated.daemonset.template.generation";

/// The strategy of `apps/v1` `daemonsets`.
pub(crate) struct DaemonSets;

impl Strategy for DaemonSets {
    fn prepare_for_create(&self, object: &mut Map<String, Value>) -> Result<(), ApiError> {
        let generation = generation_of(object)?.unwrap_or(0).max(1);
        set_generation(object, generation);
        Ok(())
    }

    /// On update, settles the generation from the stored object (`PrepareForUpdate`) before
    /// the generic checks, which have none for DaemonSets.
    fn validate(
        &self,
        _state: &State,
        _target: &Scope,
        _name: &str,
        (object, old): (&mut Value, Option<&Value>),
    ) -> Result<(), ApiError> {
        match (old, object.as_object_mut()) {
            (Some(old), Some(object)) => settle_update(object, old),
            _ => Ok(()),
        }
    }
}

/// `PrepareForUpdate`'s generation: the stored one, plus one when the template changed.
///
/// # Errors
/// As [`generation_of`], for the request's value.
fn settle_update(object: &mut Map<String, Value>, old: &Value) -> Result<(), ApiError> {
    generation_of(object)?;
    let old_generation = old
        .as_object()
        .map(generation_of)
        .and_then(Result::ok)
        .flatten()
        .unwrap_or(0);
    let template = |o: &Map<String, Value>| o.get("spec").and_then(|s| s.get("template")).cloned();
    let changed = old.as_object().map(template) != Some(template(object));
    set_generation(object, old_generation + i64::from(changed));
    Ok(())
}

/// The generation the annotation holds, if any.
///
/// # Errors
/// 400 BadRequest for a value that is not a 64-bit integer.
fn generation_of(object: &Map<String, Value>) -> Result<Option<i64>, ApiError> {
    let Some(text) = object
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(ANNOTATION))
        .and_then(Value::as_str)
    else {
        return Ok(None);
    };
    text.parse::<i64>().map(Some).map_err(|e| {
        let why = match e.kind() {
            IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => "value out of range",
            _ => "invalid syntax",
        };
        ApiError::bad_request(format!(
            "DaemonSet in version \"v1\" cannot be handled as a DaemonSet: strconv.ParseInt: parsing {:?}: {why}",
            text
        ))
    })
}

fn set_generation(object: &mut Map<String, Value>, generation: i64) {
    let Some(Value::Object(meta)) = object.get_mut("metadata") else {
        return;
    };
    let annotations = meta
        .entry("annotations")
        .or_insert_with(|| Value::Object(Map::new()));
    if !annotations.is_object() {
        *annotations = Value::Object(Map::new());
    }
    if let Some(annotations) = annotations.as_object_mut() {
        annotations.insert(ANNOTATION.into(), Value::String(generation.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(annotation: Option<&str>, image: &str) -> Map<String, Value> {
        let annotations = annotation.map(|a| json!({ANNOTATION: a}));
        let value = json!({
            "metadata": {"name": "x", "annotations": annotations},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}
        });
        value.as_object().unwrap().clone()
    }

    fn annotation(object: &Map<String, Value>) -> &str {
        object["metadata"]["annotations"][ANNOTATION]
            .as_str()
            .unwrap()
    }

    #[test]
    fn a_create_starts_at_one_or_keeps_a_higher_generation() {
        for (given, stored) in [(None, "1"), (Some("-3"), "1"), (Some("7"), "7")] {
            let mut o = object(given, "a");
            DaemonSets.prepare_for_create(&mut o).unwrap();
            assert_eq!(annotation(&o), stored, "{given:?}");
        }
    }

    #[test]
    fn a_malformed_generation_is_a_bad_request() {
        let mut o = object(Some("abc"), "a");
        let e = DaemonSets.prepare_for_create(&mut o).unwrap_err();
        assert_eq!(e.code, 400);
        assert!(
            e.message.ends_with("parsing \"abc\": invalid syntax"),
            "{}",
            e.message
        );
    }

    #[test]
    fn an_update_keeps_the_stored_generation_and_counts_template_changes() {
        let old = Value::Object(object(Some("7"), "a"));
        let mut same = object(Some("40"), "a");
        settle_update(&mut same, &old).unwrap();
        assert_eq!(annotation(&same), "7");
        let mut changed = object(Some("7"), "b");
        settle_update(&mut changed, &old).unwrap();
        assert_eq!(annotation(&changed), "8");
    }
}
