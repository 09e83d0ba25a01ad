//! OpenAPI documents in protobuf: the JSON of `/openapi/v2` or `/openapi/v3/<group-version>` turned
//! into gnostic's `openapi.v2.Document` / `openapi.v3.Document` messages, which a real API server
//! answers to `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf` (the v3
//! equivalent) and which client-go's `OpenAPISchema()` and `kubectl explain
//! --output plaintext-openapiv2` read.
//!
//! Mirrors kube-openapi's `ToProtoBinary`, which hands the JSON document to gnostic's generated
//! compiler (`openapi_v2.NewDocument`). That compiler was generated from the OpenAPI JSON schemas;
//! here the same mapping is derived from the vendored gnostic `.proto` files (see
//! `proto/README.md`) by a few rules, nothing per message:
//! - A JSON member is the field named after it in snake case (`operationId` is `operation_id`,
//!   `$ref` is `_ref`).
//! - `x-` members go to the message's `vendor_extension` (v2) or `specification_extension` (v3)
//!   list as `NamedAny`; other members that are no field go to the message's one repeated
//!   `Named*` field (the entries of a map: `Definitions`, `Paths`, `Responses`, `Properties`...).
//! - `Any` holds its value as YAML text (`yaml`), as gnostic keeps it.
//! - A message that is one `oneof` (`SchemaOrReference`, `ParametersItem`,
//!   `AdditionalPropertiesItem`, `DefaultType`...) takes the variant the JSON fits: the scalar of
//!   its JSON type, a `Reference` for an object with `$ref`, the parameter or security scheme
//!   whose name starts with the object's `in`/`type`, else the first message variant; none
//!   (an object `default` of a v3 schema) leaves it empty.
//! - A wrapper of one repeated field (`TypeItem`, `StringArray`, `ItemsItem`) takes a single value
//!   or an array.
//!
//! # Differences from gnostic
//! Members gnostic would reject (a value of the wrong JSON type) are left out instead of failing
//! the whole document; `Any.yaml` is serde_yaml's rendering, which may quote or indent differently
//! from Go's yaml.v3 but parses to the same value.

use prost::Message;
use prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind, MessageDescriptor, ReflectMessage, Value as Proto,
};
use serde_json::{Map, Value};

use crate::descriptors::pool;
use crate::error::{CodecError, Result};

/// The v2 media type as clients ask for it; servers answer with [`OPENAPI_V2_CONTENT_TYPE`].
pub const OPENAPI_V2_MEDIA_TYPE: &str =
    "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
/// The `Content-Type` of a protobuf v2 document (also the older spelling clients may ask for).
pub const OPENAPI_V2_CONTENT_TYPE: &str =
    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
/// The v3 media type as clients ask for it; servers answer with [`OPENAPI_V3_CONTENT_TYPE`].
pub const OPENAPI_V3_MEDIA_TYPE: &str =
    "application/com.github.proto-openapi.spec.v3@v1.0+protobuf";
/// The `Content-Type` of a protobuf v3 document.
pub const OPENAPI_V3_CONTENT_TYPE: &str =
    "application/com.github.proto-openapi.spec.v3.v1.0+protobuf";

/// The OpenAPI version of a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenApiVersion {
    /// Swagger 2.0 (`/openapi/v2`).
    V2,
    /// OpenAPI 3.0 (`/openapi/v3/<group-version>`).
    V3,
}

impl OpenApiVersion {
    fn document(self) -> &'static str {
        match self {
            OpenApiVersion::V2 => "openapi.v2.Document",
            OpenApiVersion::V3 => "openapi.v3.Document",
        }
    }
}

/// The protobuf bytes of an OpenAPI JSON document (the bare gnostic `Document` message, no
/// envelope, as kube-openapi serves it).
///
/// # Errors
/// [`CodecError::InvalidField`] when the document is not a JSON object.
pub fn openapi_to_protobuf(version: OpenApiVersion, document: &Value) -> Result<Vec<u8>> {
    let name = version.document();
    let descriptor = pool()
        .get_message_by_name(name)
        .ok_or_else(|| CodecError::field("", format!("{name} is not in the schema")))?;
    if !document.is_object() {
        return Err(CodecError::field(
            "",
            "an OpenAPI document is a JSON object",
        ));
    }
    let message = message(&descriptor, document)
        .ok_or_else(|| CodecError::field("", "the document does not fit the schema"))?;
    Ok(message.encode_to_vec())
}

/// `json` as a `descriptor` message, or `None` when it cannot be one.
fn message(descriptor: &MessageDescriptor, json: &Value) -> Option<DynamicMessage> {
    let mut out = DynamicMessage::new(descriptor.clone());
    if descriptor.name() == "Any" {
        let yaml = serde_yaml::to_string(json).ok()?;
        out.set_field_by_name("yaml", Proto::String(yaml));
        return Some(out);
    }
    if let Some(variants) = sole_oneof(descriptor) {
        // A value no variant fits leaves the oneof empty, as gnostic does (`default: {}` of a
        // v3 schema is an empty `DefaultType`).
        if let Some(field) = choose_variant(&variants, json)
            && let Some(value) = field_value(&field, json)
        {
            out.set_field(&field, value);
        }
        return Some(out);
    }
    let fields: Vec<FieldDescriptor> = descriptor.fields().collect();
    if let [field] = fields.as_slice()
        && field.is_list()
        && !is_named(field)
    {
        let value = field_value(field, json)?;
        out.set_field(field, value);
        return Some(out);
    }
    members(&mut out, json.as_object()?);
    Some(out)
}

/// Sets each JSON member on `out` by the rules in the module docs.
fn members(out: &mut DynamicMessage, object: &Map<String, Value>) {
    let descriptor = out.descriptor();
    let extension = descriptor
        .fields()
        .find(|f| matches!(f.name(), "vendor_extension" | "specification_extension"));
    let named: Vec<FieldDescriptor> = descriptor
        .fields()
        .filter(|f| is_named(f) && Some(f) != extension.as_ref())
        .collect();
    let map_only =
        named.len() == 1 && descriptor.fields().count() == 1 + usize::from(extension.is_some());
    for (key, json) in object {
        let direct = (!map_only)
            .then(|| descriptor.get_field_by_name(&snake_case(key)))
            .flatten();
        if let Some(field) = direct {
            if let Some(value) = field_value(&field, json) {
                out.set_field(&field, value);
            }
            continue;
        }
        let target = match &extension {
            Some(extension) if key.starts_with("x-") => extension,
            _ => match named.as_slice() {
                [field] => field,
                _ => continue,
            },
        };
        if let Some(entry) = named_entry(target, key, json)
            && let Some(list) = out.get_field_mut(target).as_list_mut()
        {
            list.push(entry);
        }
    }
}

/// One `Named*` entry `{name, value}` of the list field `field`.
fn named_entry(field: &FieldDescriptor, name: &str, json: &Value) -> Option<Proto> {
    let entry = field.kind().as_message()?.clone();
    let value_field = entry.get_field_by_name("value")?;
    let mut message = DynamicMessage::new(entry);
    message.set_field_by_name("name", Proto::String(name.to_string()));
    let value = field_value(&value_field, json)?;
    message.set_field(&value_field, value);
    Some(Proto::Message(message))
}

/// The value of `field` from `json`; a list field takes an array or one value.
fn field_value(field: &FieldDescriptor, json: &Value) -> Option<Proto> {
    if field.is_list() {
        let items = match json {
            Value::Array(items) => items.iter().collect(),
            other => vec![other],
        };
        let values: Vec<Proto> = items
            .into_iter()
            .filter_map(|item| single(&field.kind(), item))
            .collect();
        return Some(Proto::List(values));
    }
    single(&field.kind(), json)
}

fn single(kind: &Kind, json: &Value) -> Option<Proto> {
    match (kind, json) {
        (_, Value::Null) => None,
        (Kind::Message(descriptor), _) => message(descriptor, json).map(Proto::Message),
        (Kind::String, Value::String(s)) => Some(Proto::String(s.clone())),
        (Kind::String, Value::Number(n)) => Some(Proto::String(n.to_string())),
        (Kind::Bool, Value::Bool(b)) => Some(Proto::Bool(*b)),
        (Kind::Double, Value::Number(n)) => n.as_f64().map(Proto::F64),
        (Kind::Int64, Value::Number(n)) => n.as_i64().map(Proto::I64),
        _ => None,
    }
}

/// The fields of a message that is nothing but one `oneof`.
fn sole_oneof(descriptor: &MessageDescriptor) -> Option<Vec<FieldDescriptor>> {
    let mut oneofs = descriptor.oneofs();
    let oneof = oneofs.next()?;
    let fields: Vec<FieldDescriptor> = oneof.fields().collect();
    (oneofs.next().is_none() && fields.len() == descriptor.fields().count()).then_some(fields)
}

/// The variant of a oneof that `json` fits (see the module docs).
fn choose_variant(variants: &[FieldDescriptor], json: &Value) -> Option<FieldDescriptor> {
    let scalar = |wanted: fn(&Kind) -> bool| variants.iter().find(|f| wanted(&f.kind())).cloned();
    match json {
        Value::Bool(_) => return scalar(|k| matches!(k, Kind::Bool)),
        Value::Number(_) => return scalar(|k| matches!(k, Kind::Double | Kind::Int64)),
        Value::String(_) => return scalar(|k| matches!(k, Kind::String)),
        Value::Object(_) => {}
        _ => return None,
    }
    let messages: Vec<(&FieldDescriptor, MessageDescriptor)> = variants
        .iter()
        .filter_map(|f| Some((f, f.kind().as_message()?.clone())))
        .collect();
    let is_reference = |m: &MessageDescriptor| matches!(m.name(), "Reference" | "JsonReference");
    if json.get("$ref").is_some()
        && let Some((field, _)) = messages.iter().find(|(_, m)| is_reference(m))
    {
        return Some((*field).clone());
    }
    let tokens: Vec<String> = ["in", "type"]
        .iter()
        .filter_map(|key| json.get(*key)?.as_str())
        .map(str::to_ascii_lowercase)
        .collect();
    let flow = json
        .get("flow")
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase);
    messages
        .iter()
        .find(|(_, m)| names_match(m, &tokens, flow.as_deref()))
        .or_else(|| messages.iter().find(|(_, m)| !is_reference(m)))
        .map(|(field, _)| (*field).clone())
}

/// Whether a message (or, for a oneof wrapper, one of its variants) is named after the object's
/// `in` or `type` (`QueryParameterSubSchema` for `in: query`, `ApiKeySecurity` for
/// `type: apiKey`), and after its OAuth2 `flow` when it has one.
fn names_match(message: &MessageDescriptor, tokens: &[String], flow: Option<&str>) -> bool {
    let name = message.name().to_ascii_lowercase();
    let own = tokens.iter().any(|t| name.starts_with(t.as_str()))
        && flow.is_none_or(|f| name.contains(f));
    own || sole_oneof(message).is_some_and(|variants| {
        variants.iter().any(|v| {
            v.kind()
                .as_message()
                .is_some_and(|m| names_match(m, tokens, flow))
        })
    })
}

/// A repeated `Named*` message field (a map's entries).
fn is_named(field: &FieldDescriptor) -> bool {
    field.is_list()
        && field
            .kind()
            .as_message()
            .is_some_and(|m| m.name().starts_with("Named"))
}

/// `operationId` → `operation_id`, `$ref` → `_ref`.
fn snake_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        match c {
            '$' => out.push('_'),
            upper if upper.is_ascii_uppercase() => {
                out.push('_');
                out.push(upper.to_ascii_lowercase());
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
#[path = "openapi_tests.rs"]
mod tests;
