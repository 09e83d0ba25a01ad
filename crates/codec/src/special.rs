//! The messages whose JSON form is not "an object of their fields": Go types with their own
//! `MarshalJSON` (apimachinery `Time`, `IntOrString`, `Quantity`, ...) and the slice wrappers
//! go-to-protobuf generates. Recognised by message name or shape, never per kind.

use prost_reflect::{Cardinality, MessageDescriptor};

const META: &str = "k8s.io.apimachinery.pkg.apis.meta.v1";
const EXTENSIONS: &str = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1";

/// A message with a JSON form of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Special {
    /// meta/v1 `Time` `{seconds, nanos}`: RFC 3339 in whole seconds, `null` when zero.
    Time,
    /// meta/v1 `MicroTime`: RFC 3339 with microseconds, `null` when zero.
    MicroTime,
    /// meta/v1 `Duration` `{duration}` in nanoseconds: Go's `1h2m3.5s`.
    Duration,
    /// intstr `IntOrString` `{type, intVal, strVal}`: a number or a string.
    IntOrString,
    /// resource `Quantity` `{string}`: the string.
    Quantity,
    /// runtime `RawExtension`, meta/v1 `FieldsV1`, apiextensions `JSON`: one bytes field holding JSON.
    RawJson,
    /// A Go slice type wrapped in a message with one repeated field `items` (`Verbs`, `ExtraValue`):
    /// a JSON array.
    Items,
    /// apiextensions `JSONSchemaPropsOrArray` `{schema, jSONSchemas}`: a schema or an array of them.
    SchemaOrArray,
    /// apiextensions `JSONSchemaPropsOrBool` `{allows, schema}`: a schema or a boolean.
    SchemaOrBool,
    /// apiextensions `JSONSchemaPropsOrStringArray` `{schema, property}`: a schema or strings.
    SchemaOrStringArray,
}

impl Special {
    /// The JSON form of `message`, or `None` when it is an ordinary object.
    pub(crate) fn of(message: &MessageDescriptor) -> Option<Special> {
        let name = message.full_name();
        let special = match name.rsplit_once('.') {
            Some((META, "Time")) => Special::Time,
            Some((META, "MicroTime")) => Special::MicroTime,
            Some((META, "Duration")) => Special::Duration,
            Some((META, "FieldsV1")) => Special::RawJson,
            Some(("k8s.io.apimachinery.pkg.runtime", "RawExtension")) => Special::RawJson,
            Some(("k8s.io.apimachinery.pkg.util.intstr", "IntOrString")) => Special::IntOrString,
            Some(("k8s.io.apimachinery.pkg.api.resource", "Quantity")) => Special::Quantity,
            Some((EXTENSIONS, "JSON")) => Special::RawJson,
            Some((EXTENSIONS, "JSONSchemaPropsOrArray")) => Special::SchemaOrArray,
            Some((EXTENSIONS, "JSONSchemaPropsOrBool")) => Special::SchemaOrBool,
            Some((EXTENSIONS, "JSONSchemaPropsOrStringArray")) => Special::SchemaOrStringArray,
            _ if is_slice_wrapper(message) => Special::Items,
            _ => return None,
        };
        Some(special)
    }
}

/// go-to-protobuf turns a named slice type (`type Verbs []string`) into a message whose only field
/// is `repeated items = 1`; every list kind also has `metadata`, so it never matches.
fn is_slice_wrapper(message: &MessageDescriptor) -> bool {
    let mut fields = message.fields();
    match (fields.next(), fields.next()) {
        (Some(only), None) => only.name() == "items" && only.cardinality() == Cardinality::Repeated,
        _ => false,
    }
}
