//! The protobuf schema of the built-in kinds, and the lookup from `apiVersion` + `kind` to the
//! message that encodes it (client-go's scheme does this with Go types registered per group version).

use prost_reflect::{DynamicMessage, MessageDescriptor};
use serde_json::{Map, Value};

use crate::descriptors::pool;
use crate::error::{CodecError, Result};
use crate::{from_json, to_json};

/// Proto package of meta/v1, whose kinds (`Status`, `DeleteOptions`, `WatchEvent`, ...) every
/// built-in group version also serves.
const META_V1: &str = "k8s.io.apimachinery.pkg.apis.meta.v1";

/// The proto package of a built-in group version, or `None` for a group that is not built in.
///
/// Built-in groups are the core group (`v1`), dotless groups (`apps`, `batch`, ...) and groups under
/// `k8s.io`; their package is named after the group's first label (`rbac.authorization.k8s.io` is
/// `k8s.io.api.rbac`), except apiextensions, which lives in its own repository. Any other group
/// (`police.example.com`) belongs to a custom resource, which has no protobuf form.
fn package_of(api_version: &str) -> Option<String> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    if version.is_empty() || version.contains('/') {
        return None;
    }
    if group == "apiextensions.k8s.io" {
        return Some(format!(
            "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.{version}"
        ));
    }
    let short = match group {
        "" => "core",
        dotless if !dotless.contains('.') => dotless,
        dotted => dotted.strip_suffix(".k8s.io")?.split('.').next()?,
    };
    Some(format!("k8s.io.api.{short}.{version}"))
}

/// The protobuf form of one built-in kind: decodes its message bytes (the `raw` of the envelope)
/// into the JSON a real API server would write for the same object, and encodes JSON back.
///
/// # JSON conventions (Go's, which Kubernetes uses)
/// - Field names are the Go JSON names (`go_fields`); `apiVersion` and `kind` come first.
/// - `Time` is RFC 3339 in seconds, `MicroTime` in microseconds, `null` when zero; `Duration` is Go's
///   `1h2m3s`; `IntOrString` a number or a string; `Quantity` its string; `RawExtension`, `FieldsV1`
///   and apiextensions `JSON` their embedded JSON; `bytes` base64.
/// - A scalar absent from the wire is absent from the JSON; a zero scalar is kept only where Go's
///   JSON encoder keeps it (pointers, fields without `omitempty`).
#[derive(Clone, Debug)]
pub struct KindSchema {
    api_version: String,
    kind: String,
    message: MessageDescriptor,
}

impl KindSchema {
    /// The schema of a built-in kind, or `None` for custom resources and unknown kinds.
    pub fn lookup(api_version: &str, kind: &str) -> Option<KindSchema> {
        let package = package_of(api_version)?;
        if kind.is_empty() || kind.contains('.') {
            return None;
        }
        let message = pool()
            .get_message_by_name(&format!("{package}.{kind}"))
            .or_else(|| pool().get_message_by_name(&format!("{META_V1}.{kind}")))?;
        Some(KindSchema {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            message,
        })
    }

    /// Full protobuf name of the kind's message, e.g. `k8s.io.api.apps.v1.Deployment`.
    pub fn message_name(&self) -> &str {
        self.message.full_name()
    }

    /// Decodes the kind's message bytes into a JSON object carrying `apiVersion` and `kind`.
    ///
    /// # Errors
    /// [`CodecError::MessageDecodeFailed`] for bytes that are not this message,
    /// [`CodecError::InvalidField`] for a field value without a JSON form.
    pub fn decode_json(&self, bytes: &[u8]) -> Result<Value> {
        self.decode_json_at(bytes, 0)
    }

    /// [`KindSchema::decode_json`] for an object embedded `depth` envelopes deep.
    pub(crate) fn decode_json_at(&self, bytes: &[u8], depth: u32) -> Result<Value> {
        let message = DynamicMessage::decode(self.message.clone(), bytes).map_err(|e| {
            CodecError::MessageDecodeFailed {
                message: self.message.full_name().to_string(),
                reason: e.to_string(),
            }
        })?;
        let mut object = Map::new();
        object.insert("apiVersion".into(), self.api_version.clone().into());
        object.insert("kind".into(), self.kind.clone().into());
        if let Value::Object(fields) = to_json::message(&message, "", depth)? {
            object.extend(fields);
        }
        Ok(Value::Object(object))
    }

    /// Encodes a JSON object of this kind into its message bytes; `apiVersion` and `kind` belong to
    /// the envelope and are not part of the message.
    ///
    /// # Errors
    /// [`CodecError::InvalidField`] for a field the schema does not have or a value of the wrong
    /// JSON type.
    pub fn encode_json(&self, object: &Value) -> Result<Vec<u8>> {
        let message = from_json::object(&self.message, object)?;
        Ok(prost::Message::encode_to_vec(&message))
    }
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
