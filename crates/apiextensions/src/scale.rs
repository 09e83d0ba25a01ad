//! The replica fields of a CRD's `scale` subresource (apiextensions
//! `pkg/registry/customresource/strategy.go`, `validateScaleSpec` / `validateScaleStatus`): at
//! `specReplicasPath` and `statusReplicasPath`, if present, a non-negative int32; at
//! `labelSelectorPath`, if present, a string. Errors name the path as the CRD writes it
//! (`.spec.replicas`) and are worded as unstructured's `NestedInt64` accessor errors.

use serde_json::Value;

use crate::field::{ErrorType, FieldError};

/// The paths of a version's `subresources.scale`.
#[derive(Clone, Debug, Default)]
pub(crate) struct ScalePaths {
    pub(crate) spec_replicas: Option<String>,
    pub(crate) status_replicas: Option<String>,
    pub(crate) label_selector: Option<String>,
}

impl ScalePaths {
    pub(crate) fn from_version(version: Option<&Value>) -> Option<ScalePaths> {
        let scale = version?.pointer("/subresources/scale")?;
        let text = |key: &str| scale.get(key).and_then(Value::as_str).map(str::to_string);
        Some(ScalePaths {
            spec_replicas: text("specReplicasPath"),
            status_replicas: text("statusReplicasPath"),
            label_selector: text("labelSelectorPath"),
        })
    }

    /// The spec replicas and status checks, as a create or an update of the object validates
    /// them (`ValidateScaleSpec` then `ValidateScaleStatus`).
    pub(crate) fn validate(&self, object: &Value, errors: &mut Vec<FieldError>) {
        if let Some(path) = &self.spec_replicas {
            replicas(object, path, errors);
        }
        self.validate_status(object, errors);
    }

    /// The status replicas and label selector checks alone, as a write of `/status` validates
    /// them (`ValidateScaleStatus`).
    pub(crate) fn validate_status(&self, object: &Value, errors: &mut Vec<FieldError>) {
        if let Some(path) = &self.status_replicas {
            replicas(object, path, errors);
        }
        if let Some(path) = &self.label_selector
            && let Err(detail) = nested(object, path, "string")
        {
            errors.push(FieldError::shown(
                ErrorType::Invalid,
                path,
                &"".into(),
                detail,
            ));
        }
    }
}

/// A replica count at `path`, if present: a non-negative int32.
fn replicas(object: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let invalid =
        |value: Value, detail: String| FieldError::shown(ErrorType::Invalid, path, &value, detail);
    match nested(object, path, "int64") {
        Err(detail) => errors.push(invalid(0.into(), detail)),
        Ok(Some(Value::Number(n))) if n.as_i64().is_some_and(|i| i < 0) => {
            errors.push(invalid(
                Value::Number(n.clone()),
                "should be a non-negative integer".into(),
            ));
        }
        Ok(Some(Value::Number(n))) if n.as_i64().is_some_and(|i| i > i64::from(i32::MAX)) => {
            let detail = format!("should be less than or equal to {}", i32::MAX);
            errors.push(invalid(Value::Number(n.clone()), detail));
        }
        Ok(_) => {}
    }
}

/// unstructured's `NestedFieldNoCopy` plus the type check of `NestedInt64`/`NestedString`.
fn nested<'a>(object: &'a Value, path: &str, want: &str) -> Result<Option<&'a Value>, String> {
    let mut current = object;
    for key in path.trim_start_matches('.').split('.') {
        match current {
            Value::Object(map) => match map.get(key) {
                Some(next) => current = next,
                None => return Ok(None),
            },
            other => {
                let type_name = go_type(other);
                return Err(format!(
                    "{path} accessor error: {} is of the type {type_name}, expected map[string]interface{{}}",
                    go_value(other)
                ));
            }
        }
    }
    let ok = match want {
        "int64" => current.as_i64().is_some(),
        _ => current.is_string(),
    };
    if ok || current.is_null() && want == "string" {
        return Ok(Some(current));
    }
    Err(format!(
        "{path} accessor error: {} is of the type {}, expected {want}",
        go_value(current),
        go_type(current)
    ))
}

fn go_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Go's `%v` of a decoded JSON value (strings unquoted).
fn go_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "<nil>".into(),
        Value::Number(n) => crate::field::number(n),
        other => other.to_string(),
    }
}
