//! ConfigMaps and Secrets: at most 1 MiB of data (`core.MaxSecretSize`), the one rule of
//! `pkg/apis/core/validation`'s `ValidateConfigMap` / `ValidateSecret` a test double keeps, as
//! controllers that write generated data trip over it.

use serde_json::Value;

use crate::kinds::strategy::Strategy;
use crate::request::scope::Scope;
use crate::status::{ApiError, Cause, cause};

/// The most data a ConfigMap or Secret may hold (`core.MaxSecretSize`, 1 MiB).
const MAX_DATA_BYTES: usize = 1024 * 1024;

/// The strategy of `configmaps` (`secret: false`) and `secrets`.
pub(crate) struct ConfigData {
    pub(crate) secret: bool,
}

impl Strategy for ConfigData {
    fn validate_stored(&self, target: &Scope, name: &str, object: &Value) -> Result<(), ApiError> {
        match self.too_long(object) {
            Some(too_long) => Err(ApiError::invalid(
                &target.def.group,
                &target.def.kind,
                name,
                vec![too_long],
            )),
            None => Ok(()),
        }
    }
}

impl ConfigData {
    /// The 422 cause for a ConfigMap whose `data` plus `binaryData`, or a Secret whose `data`
    /// plus `stringData`, hold more than 1 MiB of values (binary values counted decoded), as the
    /// real validation reports it; None for smaller objects.
    fn too_long(&self, object: &Value) -> Option<Cause> {
        let values = |field: &str| -> Vec<&str> {
            object
                .get(field)
                .and_then(Value::as_object)
                .map(|m| m.values().filter_map(Value::as_str).collect())
                .unwrap_or_default()
        };
        let decoded = |text: &str| {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_or(text.len(), |bytes| bytes.len())
        };
        let (total, field): (usize, &str) = if self.secret {
            (
                values("data").iter().map(|v| decoded(v)).sum::<usize>()
                    + values("stringData").iter().map(|v| v.len()).sum::<usize>(),
                "data",
            )
        } else {
            (
                values("data").iter().map(|v| v.len()).sum::<usize>()
                    + values("binaryData")
                        .iter()
                        .map(|v| decoded(v))
                        .sum::<usize>(),
                // The real validation reports the whole object, with an empty path printed as `[]`.
                "[]",
            )
        };
        (total > MAX_DATA_BYTES).then(|| {
            cause(
                "FieldValueTooLong",
                field,
                format!("Too long: may not be more than {MAX_DATA_BYTES} bytes"),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configmaps_and_secrets_over_one_mebibyte_are_too_long() {
        let (configmaps, secrets) = (ConfigData { secret: false }, ConfigData { secret: true });
        let half = "x".repeat(MAX_DATA_BYTES / 2);
        let exactly = serde_json::json!({"data": {"a": half, "b": half}});
        assert_eq!(configmaps.too_long(&exactly), None);
        let over = serde_json::json!({"data": {"a": half, "b": format!("{half}y")}});
        let cause = configmaps.too_long(&over).unwrap();
        assert_eq!(cause.reason, "FieldValueTooLong");
        assert_eq!(
            cause.message,
            "Too long: may not be more than 1048576 bytes"
        );
        use base64::Engine;
        let encoded =
            base64::engine::general_purpose::STANDARD.encode(vec![0u8; MAX_DATA_BYTES + 1]);
        let secret = serde_json::json!({"data": {"a": encoded}});
        assert_eq!(secrets.too_long(&secret).unwrap().field, "data");
    }
}
