//! The configuration of an apply request (apiserver `fieldmanager` decoding the patch into a
//! typed object), checked against the URL before anything merges.

use serde_json::Value;

use crate::object::metadata_mut;
use crate::request::route::normalize_namespace;
use crate::request::scope::Scope;
use crate::status::ApiError;

/// An apply request's configuration, checked against the URL.
pub(crate) struct Config {
    pub(super) value: Value,
    /// `namespace/name; group/version, Kind=kind` as sent, for error messages.
    pub(super) ident: String,
}

impl Config {
    /// Reads an apply patch (YAML, or JSON, which is YAML).
    ///
    /// # Errors
    /// 400 for YAML that is not an object, another kind or version (`invalid object type:
    /// /v1, Kind=Secret`), another name or namespace than the URL's (checked on v1.36).
    pub(crate) fn parse(body: &[u8], target: &Scope) -> Result<Config, ApiError> {
        let value: Value = serde_yaml::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
        let Value::Object(mut config) = value else {
            return Err(ApiError::bad_request(
                "error decoding YAML: the configuration is not an object",
            ));
        };
        let text = |map: &serde_json::Map<String, Value>, key: &str| {
            map.get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let (api_version, kind) = (text(&config, "apiVersion"), text(&config, "kind"));
        let gvk = match api_version.contains('/') {
            true => format!("{api_version}, Kind={kind}"),
            false => format!("/{api_version}, Kind={kind}"),
        };
        let def = &target.def;
        if api_version != def.api_version() || kind != def.kind {
            return Err(ApiError::bad_request(format!("invalid object type: {gvk}")));
        }
        let meta = metadata_mut(&mut config)?;
        let (namespace, given) = (text(meta, "namespace"), text(meta, "name"));
        let name = target.name.as_deref().unwrap_or_default();
        if given != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({given}) does not match the name on the URL ({name})"
            )));
        }
        normalize_namespace(meta, target)?;
        Ok(Config {
            value: Value::Object(config),
            ident: format!("{namespace}/{given}; {gvk}"),
        })
    }
}
