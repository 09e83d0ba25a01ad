//! The values of the wire decoder (`de`) that are not "a map of fields": scalars, zero and `null`
//! detection, and the special messages with a JSON form of their own (`special`), including
//! objects embedded in a `RawExtension` (a watch event's object).

use std::fmt::Write;

use base64::Engine;
use serde::de::value::{BorrowedStrDeserializer, StringDeserializer};
use serde::de::{DeserializeSeed, Deserializer, Visitor};

// A slice wrapper's items and a `RawExtension`'s embedded object are messages again, which the
// walker in `de` decodes: a recursive descent over two files.
use crate::borrowed_envelope::BorrowedEnvelope;
use crate::de::{RunDe, visit_message}; // import-cycle: messages nest through special messages
use crate::envelope::MAGIC;
use crate::error::{CodecError, Result};
use crate::plan::{MessagePlan, ValueKind, plans};
use crate::special::Special;
use crate::wire::{Data, Reader};
use crate::{go_duration, to_json};

/// Whether a value present on the wire is one Go's JSON leaves out of an `omitempty` field: a zero
/// scalar, or a message whose JSON is `null`.
pub(crate) fn is_null_or_zero(kind: ValueKind, data: Data<'_>) -> bool {
    match (kind, data) {
        (ValueKind::Message(_), _) => is_null(kind, data),
        (ValueKind::Float, Data::Fixed32(bits)) => f32::from_bits(bits) == 0.0,
        (ValueKind::Double, Data::Fixed64(bits)) => f64::from_bits(bits) == 0.0,
        (_, Data::Varint(n) | Data::Fixed64(n)) => n == 0,
        (_, Data::Fixed32(n)) => n == 0,
        (_, Data::Len(bytes)) => bytes.is_empty(),
    }
}

/// Whether a message value's JSON is `null`: a zero `Time`/`MicroTime` (neither field on the
/// wire), an empty `RawExtension`/`FieldsV1`/`JSON`, a schema-or-array/strings with neither set.
pub(crate) fn is_null(kind: ValueKind, data: Data<'_>) -> bool {
    let (ValueKind::Message(index), Data::Len(bytes)) = (kind, data) else {
        return false;
    };
    match plans()[index].special {
        Some(Special::Time | Special::MicroTime) => {
            fields(bytes).all(|(number, _)| !matches!(number, 1 | 2))
        }
        Some(Special::RawJson) => !fields(bytes)
            .any(|(number, data)| number == 1 && !matches!(data, Data::Len(raw) if raw.is_empty())),
        Some(Special::SchemaOrArray | Special::SchemaOrStringArray) => bytes.is_empty(),
        _ => false,
    }
}

/// The well-formed records of a small special message (decoding reports malformed ones).
fn fields(bytes: &[u8]) -> impl Iterator<Item = (u32, Data<'_>)> {
    let mut reader = Reader::new(bytes);
    std::iter::from_fn(move || reader.record().ok().flatten())
}

fn varint_field(bytes: &[u8], number: u32) -> Result<Option<u64>> {
    let mut reader = Reader::new(bytes);
    let mut found = None;
    while let Some((n, data)) = reader.record()? {
        if n == number
            && let Data::Varint(v) = data
        {
            found = Some(v);
        }
    }
    Ok(found)
}

fn bytes_field(bytes: &[u8], number: u32) -> Result<Option<&[u8]>> {
    let mut reader = Reader::new(bytes);
    let mut found = None;
    while let Some((n, data)) = reader.record()? {
        if n == number
            && let Data::Len(v) = data
        {
            found = Some(v);
        }
    }
    Ok(found)
}

pub(crate) fn text(bytes: &[u8]) -> Result<&str> {
    std::str::from_utf8(bytes).map_err(|e| CodecError::field("", format!("invalid UTF-8: {e}")))
}

/// A scalar record as the JSON value Go writes for it.
pub(crate) fn visit_scalar<'de, V: Visitor<'de>>(
    kind: ValueKind,
    data: Data<'de>,
    visitor: V,
) -> Result<V::Value> {
    match (kind, data) {
        (ValueKind::Bool, Data::Varint(v)) => visitor.visit_bool(v != 0),
        (ValueKind::Int32 | ValueKind::Enum, Data::Varint(v)) => visitor.visit_i32(v as i32),
        (ValueKind::Int64, Data::Varint(v)) => visitor.visit_i64(v as i64),
        (ValueKind::Uint32, Data::Varint(v)) => visitor.visit_u32(v as u32),
        (ValueKind::Uint64, Data::Varint(v)) => visitor.visit_u64(v),
        (ValueKind::Sint32, Data::Varint(v)) => {
            visitor.visit_i32(((v >> 1) as i32) ^ -((v & 1) as i32))
        }
        (ValueKind::Sint64, Data::Varint(v)) => {
            visitor.visit_i64(((v >> 1) as i64) ^ -((v & 1) as i64))
        }
        (ValueKind::Fixed32, Data::Fixed32(v)) => visitor.visit_u32(v),
        (ValueKind::Sfixed32, Data::Fixed32(v)) => visitor.visit_i32(v as i32),
        (ValueKind::Fixed64, Data::Fixed64(v)) => visitor.visit_u64(v),
        (ValueKind::Sfixed64, Data::Fixed64(v)) => visitor.visit_i64(v as i64),
        (ValueKind::Float, Data::Fixed32(v)) => visit_float(f64::from(f32::from_bits(v)), visitor),
        (ValueKind::Double, Data::Fixed64(v)) => visit_float(f64::from_bits(v), visitor),
        (ValueKind::String, Data::Len(bytes)) => visitor.visit_borrowed_str(text(bytes)?),
        (ValueKind::Bytes, Data::Len(bytes)) => {
            visitor.visit_string(base64::engine::general_purpose::STANDARD.encode(bytes))
        }
        (kind, data) => Err(CodecError::field(
            "",
            format!("expected {kind:?}, found a {} record", data.wire_name()),
        )),
    }
}

/// Go writes a float with no fraction as an integer (`0`, not `0.0`); NaN and infinities have no
/// JSON form.
fn visit_float<'de, V: Visitor<'de>>(n: f64, visitor: V) -> Result<V::Value> {
    const EXACT_INTEGERS: f64 = 9_007_199_254_740_992.0; // 2^53
    if !n.is_finite() {
        return Err(CodecError::field("", format!("{n} has no JSON form")));
    }
    if n.fract() == 0.0 && n.abs() < EXACT_INTEGERS {
        return visitor.visit_i64(n as i64);
    }
    visitor.visit_f64(n)
}

/// A map entry's key as a JSON object key (Kubernetes maps are keyed by strings; numbers and
/// booleans are written as their text, as Go's JSON does).
pub(crate) fn visit_map_key<'de, K: DeserializeSeed<'de>>(
    kind: ValueKind,
    key: Option<Data<'de>>,
    seed: K,
) -> Result<K::Value> {
    let text = match (kind, key) {
        (_, None) if matches!(kind, ValueKind::String) => "",
        (ValueKind::String, Some(Data::Len(bytes))) => text(bytes)?,
        (ValueKind::Bool, key) => {
            let on = matches!(key, Some(Data::Varint(v)) if v != 0);
            return seed.deserialize(BorrowedStrDeserializer::new(if on {
                "true"
            } else {
                "false"
            }));
        }
        (kind, key) => {
            let number = match key.unwrap_or(Data::Varint(0)) {
                Data::Varint(v) | Data::Fixed64(v) => v as i64,
                Data::Fixed32(v) => i64::from(v),
                Data::Len(_) => {
                    return Err(CodecError::field(
                        "",
                        format!("map key of {kind:?} is bytes"),
                    ));
                }
            };
            return seed.deserialize(StringDeserializer::new(number.to_string()));
        }
    };
    seed.deserialize(BorrowedStrDeserializer::new(text))
}

/// A special message's JSON form.
pub(crate) fn visit<'de, V: Visitor<'de>>(
    special: Special,
    plan: &'static MessagePlan,
    bytes: &'de [u8],
    depth: u32,
    visitor: V,
) -> Result<V::Value> {
    match special {
        Special::Time => visit_time(bytes, false, visitor),
        Special::MicroTime => visit_time(bytes, true, visitor),
        Special::Duration => {
            let nanos = varint_field(bytes, 1)?.unwrap_or(0) as i64;
            visitor.visit_string(go_duration::format(nanos))
        }
        Special::IntOrString => visit_int_or_string(bytes, visitor),
        Special::Quantity => match bytes_field(bytes, 1)? {
            Some(quantity) => visitor.visit_borrowed_str(text(quantity)?),
            None => visitor.visit_borrowed_str("0"),
        },
        Special::RawJson => match bytes_field(bytes, 1)? {
            None | Some([]) => visitor.visit_unit(),
            Some(raw) => visit_raw(raw, depth, visitor),
        },
        Special::Items => {
            let Some(field) = plan.fields.first() else {
                return Err(CodecError::field("", "slice wrapper without items"));
            };
            let mut reader = Reader::new(bytes);
            let first = reader.record()?.map(|(_, data)| data);
            let run = RunDe {
                field,
                first,
                reader: &mut reader,
                depth,
            };
            run.deserialize_any(visitor)
        }
        Special::SchemaOrArray | Special::SchemaOrBool | Special::SchemaOrStringArray => {
            visit_through_json(plan, bytes, visitor)
        }
    }
}

/// The rare CRD schema unions go through the JSON value decoder (`to_json`), which knows their
/// forms; they are never on the hot path of an informer.
fn visit_through_json<'de, V: Visitor<'de>>(
    plan: &'static MessagePlan,
    bytes: &'de [u8],
    visitor: V,
) -> Result<V::Value> {
    let message =
        prost_reflect::DynamicMessage::decode(plan.descriptor.clone(), bytes).map_err(|e| {
            CodecError::MessageDecodeFailed {
                message: plan.name().to_string(),
                reason: e.to_string(),
            }
        })?;
    let json = to_json::message(&message, "", 0)?;
    json.deserialize_any(visitor)
        .map_err(|e| CodecError::field("", e.to_string()))
}

/// `Time` (seconds) and `MicroTime` (microseconds) as RFC 3339 in UTC, as Go writes them.
fn visit_time<'de, V: Visitor<'de>>(
    bytes: &'de [u8],
    micros: bool,
    visitor: V,
) -> Result<V::Value> {
    let (mut seconds, mut nanos) = (None, None);
    let mut reader = Reader::new(bytes);
    while let Some((number, data)) = reader.record()? {
        match (number, data) {
            (1, Data::Varint(v)) => seconds = Some(v as i64),
            (2, Data::Varint(v)) => nanos = Some(v as i32),
            _ => {}
        }
    }
    if seconds.is_none() && nanos.is_none() {
        return visitor.visit_unit();
    }
    let time = jiff::Timestamp::new(seconds.unwrap_or(0), nanos.unwrap_or(0))
        .map_err(|e| CodecError::field("", format!("invalid timestamp: {e}")))?;
    let civil = jiff::tz::Offset::UTC.to_datetime(time);
    let mut out = String::with_capacity(27);
    // Writing to a String cannot fail.
    let _ = write!(
        out,
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        civil.year(),
        civil.month(),
        civil.day(),
        civil.hour(),
        civil.minute(),
        civil.second()
    );
    if micros {
        let _ = write!(out, ".{:06}", civil.subsec_nanosecond() / 1_000);
    }
    out.push('Z');
    visitor.visit_string(out)
}

/// `IntOrString`: `type` 0 is the integer `intVal`, 1 the string `strVal`.
fn visit_int_or_string<'de, V: Visitor<'de>>(bytes: &'de [u8], visitor: V) -> Result<V::Value> {
    let (mut kind, mut int, mut string) = (0, 0, "");
    let mut reader = Reader::new(bytes);
    while let Some((number, data)) = reader.record()? {
        match (number, data) {
            (1, Data::Varint(v)) => kind = v as i64,
            (2, Data::Varint(v)) => int = v as i32,
            (3, Data::Len(s)) => string = text(s)?,
            _ => {}
        }
    }
    match kind {
        0 => visitor.visit_i32(int),
        1 => visitor.visit_borrowed_str(string),
        other => Err(CodecError::field(
            "",
            format!("IntOrString has unknown type {other}"),
        )),
    }
}

/// A `RawExtension`'s bytes: JSON, or an object a protobuf encoder embedded with its own envelope.
fn visit_raw<'de, V: Visitor<'de>>(raw: &'de [u8], depth: u32, visitor: V) -> Result<V::Value> {
    if !raw.starts_with(&MAGIC) {
        let mut json = serde_json::Deserializer::from_slice(raw);
        let value = json
            .deserialize_any(visitor)
            .and_then(|value| json.end().map(|()| value));
        return value.map_err(|e| CodecError::field("", format!("embedded JSON: {e}")));
    }
    let envelope = BorrowedEnvelope::parse(raw)?;
    let plan = envelope.plan()?;
    // An embedded object is one more level of nesting, so `de`'s depth limit bounds embedding too.
    visit_message(
        plan,
        envelope.raw,
        Some((envelope.api_version, envelope.kind)),
        depth + 1,
        visitor,
    )
    .map_err(|e: CodecError| e.within("object"))
}
