//! A `serde::Deserializer` over protobuf wire bytes: decodes a built-in kind straight into the
//! k8s-openapi type (or any serde type) the caller asks for, with no intermediate message or JSON
//! value. It presents each message as the JSON object a real API server would write for it, so a
//! type decodes to the same value from either encoding.
//!
//! client-go decodes protobuf into Go structs through gogo-generated `Unmarshal` methods, one per
//! type; here one walker, guided by the precomputed [`plan`](crate::plan)s, serves every kind.
//!
//! # How the wire maps to JSON (the same rules as `to_json`, which is tested against real servers)
//! - A message is a map keyed by Go JSON names, in wire order; fields unknown to the schema are
//!   skipped. An inline field's members are the parent's keys.
//! - A scalar present on the wire with its zero value (gogo writes every non-pointer scalar) is
//!   left out unless Go's JSON keeps that zero (`go_fields`: pointers, no `omitempty`). A message
//!   whose JSON is `null` (a zero `Time`, an empty `RawExtension`) likewise. After the last record,
//!   the fields Go always writes but the wire lacked are given as their zero.
//! - A repeated field is a sequence of its consecutive records (packed runs unpacked); a map field an
//!   object of its consecutive entry records. A repeated field whose records are split by other
//!   fields (no Kubernetes encoder writes that) is an error rather than silently half-read.
//! - Special messages (`special`): `Time` and `MicroTime` are RFC 3339 strings, `Duration` Go's text
//!   form, `IntOrString` a number or a string, `Quantity` its string, `RawExtension` / `FieldsV1` /
//!   `JSON` their embedded JSON (or embedded protobuf object), bytes base64 strings.
//!
//! Errors name the JSON path of the field where decoding stopped; nothing here panics on input.

use std::fmt::Display;

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

use crate::de_special;
use crate::error::{CodecError, Result};
use crate::plan::{FieldPlan, MessagePlan, Shape, ValueKind, plans};
use crate::wire::{Data, Reader};

/// How deep messages may nest: bounds the recursion a crafted body could cause (the deepest
/// Kubernetes objects nest about 15 messages).
const MAX_DEPTH: u32 = 64;

impl de::Error for CodecError {
    fn custom<T: Display>(msg: T) -> Self {
        CodecError::field("", msg.to_string())
    }
}

/// The `apiVersion` and `kind` an object's map starts with (the envelope's; list items have none).
pub(crate) type TypeHeader<'de> = Option<(&'de str, &'de str)>;

/// Decodes the message `plan` from `bytes` into `visitor`'s value.
pub(crate) fn visit_message<'de, V: Visitor<'de>>(
    plan: &'static MessagePlan,
    bytes: &'de [u8],
    header: TypeHeader<'de>,
    depth: u32,
    visitor: V,
) -> Result<V::Value> {
    if depth > MAX_DEPTH {
        return Err(CodecError::field(
            "",
            format!("messages nested more than {MAX_DEPTH} deep"),
        ));
    }
    match plan.special {
        Some(special) => de_special::visit(special, plan, bytes, depth, visitor),
        None => visitor.visit_map(MessageAccess::new(plan, bytes, header, depth)),
    }
}

/// Which wire fields of a message were seen, by index in its plan (fields past 128 are not
/// tracked: no Kubernetes message has that many).
#[derive(Default)]
struct Seen(u128);

impl Seen {
    /// Marks `index`; returns whether it was already marked.
    fn mark(&mut self, index: usize) -> bool {
        let bit = 1u128.checked_shl(index as u32).unwrap_or(0);
        let was = self.0 & bit != 0;
        self.0 |= bit;
        was
    }
}

enum Pending<'de> {
    Text(&'static str, &'de str),
    Field(&'static FieldPlan, Data<'de>),
    Zero(ValueKind),
}

/// A message as a JSON object: its fields in wire order.
pub(crate) struct MessageAccess<'de> {
    root: &'static MessagePlan,
    plan: &'static MessagePlan,
    reader: Reader<'de>,
    /// Where to resume the parents of inline fields being walked.
    outer: Vec<(Reader<'de>, &'static MessagePlan)>,
    header: TypeHeader<'de>,
    /// 0: `apiVersion` next, 1: `kind` next, 2: header done.
    header_step: u8,
    pending: Option<Pending<'de>>,
    seen: Seen,
    /// Next index into `root.always` to consider once the wire has ended.
    always_next: usize,
    depth: u32,
}

impl<'de> MessageAccess<'de> {
    fn new(
        plan: &'static MessagePlan,
        bytes: &'de [u8],
        header: TypeHeader<'de>,
        depth: u32,
    ) -> Self {
        MessageAccess {
            root: plan,
            plan,
            reader: Reader::new(bytes),
            outer: Vec::new(),
            header,
            header_step: if header.is_some() { 0 } else { 2 },
            pending: None,
            seen: Seen::default(),
            always_next: 0,
            depth,
        }
    }

    fn next_header(&mut self) -> Option<&'static str> {
        let (api_version, kind) = self.header?;
        let (key, value) = match self.header_step {
            0 => ("apiVersion", api_version),
            1 => ("kind", kind),
            _ => return None,
        };
        self.header_step += 1;
        self.pending = Some(Pending::Text(key, value));
        Some(key)
    }

    /// The next field to hand out, or `None` at the end of the message.
    fn next_field(&mut self) -> Result<Option<&'static str>> {
        loop {
            let record = self
                .reader
                .record()
                .map_err(|e: CodecError| e.within(self.plan.name()))?;
            let Some((number, data)) = record else {
                match self.outer.pop() {
                    Some((reader, plan)) => (self.reader, self.plan) = (reader, plan),
                    None => return Ok(self.next_always()),
                }
                continue;
            };
            let Some(index) = self.plan.field(number) else {
                continue;
            };
            let field = &self.plan.fields[index];
            let repeats = matches!(field.shape, Shape::Repeated | Shape::Map);
            if self.outer.is_empty() && self.seen.mark(index) && repeats {
                return Err(CodecError::field(
                    &field.json_name,
                    "repeated field split into non-consecutive records",
                ));
            }
            match (field.shape, field.kind, data) {
                (Shape::Inline, ValueKind::Message(nested), Data::Len(bytes)) => {
                    let parent = std::mem::replace(&mut self.reader, Reader::new(bytes));
                    self.outer.push((parent, self.plan));
                    self.plan = &plans()[nested];
                    continue;
                }
                (Shape::Single, kind, data)
                    if !field.keeps_zero && de_special::is_null_or_zero(kind, data) =>
                {
                    continue;
                }
                _ => {}
            }
            self.pending = Some(Pending::Field(field, data));
            return Ok(Some(field.json_name.as_str()));
        }
    }

    /// After the wire: the next field Go always writes that the wire lacked.
    fn next_always(&mut self) -> Option<&'static str> {
        while let Some(&index) = self.root.always.get(self.always_next) {
            self.always_next += 1;
            if !self.seen.mark(index) {
                let field = &self.root.fields[index];
                self.pending = Some(Pending::Zero(field.kind));
                return Some(field.json_name.as_str());
            }
        }
        None
    }

    /// Skips the records of a repeated field that its value did not consume.
    fn drain(&mut self, number: u32) -> Result<()> {
        while self.reader.peek_number() == Some(number) {
            self.reader.record()?;
        }
        Ok(())
    }
}

impl<'de> MapAccess<'de> for MessageAccess<'de> {
    type Error = CodecError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let key = match self.next_header() {
            Some(key) => Some(key),
            None => self.next_field()?,
        };
        match key {
            Some(key) => seed
                .deserialize(BorrowedStrDeserializer::new(key))
                .map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let depth = self.depth;
        match self.pending.take() {
            Some(Pending::Text(key, text)) => seed
                .deserialize(BorrowedStrDeserializer::new(text))
                .map_err(|e: CodecError| e.within(key)),
            Some(Pending::Zero(kind)) => seed.deserialize(ZeroDe(kind)),
            Some(Pending::Field(field, data)) => {
                let value = match field.shape {
                    Shape::Repeated | Shape::Map => {
                        let run = RunDe {
                            field,
                            first: Some(data),
                            reader: &mut self.reader,
                            depth,
                        };
                        let value = seed.deserialize(run);
                        value.and_then(|v| self.drain(field.number).map(|()| v))
                    }
                    _ => seed.deserialize(ValueDe {
                        kind: field.kind,
                        data,
                        depth,
                    }),
                };
                value.map_err(|e: CodecError| e.within(&field.json_name))
            }
            None => Err(CodecError::field(
                "",
                "a value was asked for before its key",
            )),
        }
    }
}

/// A top-level object: a message with, for enveloped objects, `apiVersion` and `kind` first.
pub(crate) struct ObjectDe<'de> {
    plan: &'static MessagePlan,
    bytes: &'de [u8],
    header: TypeHeader<'de>,
}

impl<'de> ObjectDe<'de> {
    pub(crate) fn new(
        plan: &'static MessagePlan,
        bytes: &'de [u8],
        header: TypeHeader<'de>,
    ) -> Self {
        ObjectDe {
            plan,
            bytes,
            header,
        }
    }
}

impl<'de> de::Deserializer<'de> for ObjectDe<'de> {
    type Error = CodecError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visit_message(self.plan, self.bytes, self.header, 0, visitor).map_err(|e| match e {
            // An error of the object as a whole (the target type refused it): name the message.
            CodecError::InvalidField { path, reason } if path.is_empty() => {
                CodecError::field(self.plan.name(), reason)
            }
            other => other,
        })
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

/// One value: a scalar, or a message (the record's bytes).
pub(crate) struct ValueDe<'de> {
    pub(crate) kind: ValueKind,
    pub(crate) data: Data<'de>,
    pub(crate) depth: u32,
}

impl<'de> de::Deserializer<'de> for ValueDe<'de> {
    type Error = CodecError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match (self.kind, self.data) {
            (ValueKind::Message(index), Data::Len(bytes)) => {
                visit_message(&plans()[index], bytes, None, self.depth + 1, visitor)
            }
            (kind, data) => de_special::visit_scalar(kind, data, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if de_special::is_null(self.kind, self.data) {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }

    /// A string is a unit variant (`status: Failure`), as in JSON.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        match (self.kind, self.data) {
            (ValueKind::String, Data::Len(bytes)) => {
                visitor.visit_enum(BorrowedStrDeserializer::new(de_special::text(bytes)?))
            }
            _ => self.deserialize_any(visitor),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier
    }
}

/// The zero value Go's JSON writes for an absent field it always writes (a zero `Time` is `null`).
pub(crate) struct ZeroDe(pub(crate) ValueKind);

impl<'de> de::Deserializer<'de> for ZeroDe {
    type Error = CodecError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.0 {
            ValueKind::String | ValueKind::Bytes => visitor.visit_borrowed_str(""),
            ValueKind::Bool => visitor.visit_bool(false),
            ValueKind::Message(_) => visitor.visit_unit(),
            _ => visitor.visit_i64(0),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.0 {
            ValueKind::Message(_) => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

/// A repeated or map field: its first record and the reader positioned after it.
pub(crate) struct RunDe<'a, 'de> {
    pub(crate) field: &'static FieldPlan,
    pub(crate) first: Option<Data<'de>>,
    pub(crate) reader: &'a mut Reader<'de>,
    pub(crate) depth: u32,
}

impl<'de> RunDe<'_, 'de> {
    /// The next record of the run: the first one, then each following record of the same field.
    fn next_record(&mut self) -> Result<Option<Data<'de>>> {
        if let Some(first) = self.first.take() {
            return Ok(Some(first));
        }
        if self.reader.peek_number() != Some(self.field.number) {
            return Ok(None);
        }
        Ok(self.reader.record()?.map(|(_, data)| data))
    }
}

impl<'de> de::Deserializer<'de> for RunDe<'_, 'de> {
    type Error = CodecError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.field.shape == Shape::Map {
            visitor.visit_map(Entries {
                run: self,
                value: None,
            })
        } else {
            visitor.visit_seq(Elements {
                run: self,
                packed: None,
                index: 0,
            })
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct enum identifier
    }
}

/// The elements of a repeated field, packed runs unpacked.
struct Elements<'a, 'de> {
    run: RunDe<'a, 'de>,
    packed: Option<Reader<'de>>,
    index: usize,
}

impl<'de> SeqAccess<'de> for Elements<'_, 'de> {
    type Error = CodecError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        let kind = self.run.field.kind;
        let data = loop {
            if let Some(packed) = &mut self.packed {
                if !packed.is_empty() {
                    break packed.packed(kind)?;
                }
                self.packed = None;
            }
            match self.run.next_record()? {
                None => return Ok(None),
                Some(Data::Len(bytes)) if kind.packable() => {
                    self.packed = Some(Reader::new(bytes));
                }
                Some(data) => break data,
            }
        };
        let index = self.index;
        self.index += 1;
        let depth = self.run.depth;
        seed.deserialize(ValueDe { kind, data, depth })
            .map(Some)
            .map_err(|e: CodecError| e.within(&format!("[{index}]")))
    }

    /// The number of elements, counted ahead over the run's records before the first one is
    /// taken, so that a `Vec` is allocated at its exact size. Without it serde grows the `Vec` by
    /// doubling from 4 elements, and a cached object keeps the slack for its whole life (a
    /// `managedFields` of one entry would hold room for four). Packed scalars (several elements
    /// per record) are not counted.
    fn size_hint(&self) -> Option<usize> {
        if self.index != 0 || self.packed.is_some() || self.run.field.kind.packable() {
            return None;
        }
        let mut ahead = *self.run.reader;
        let mut count = usize::from(self.run.first.is_some());
        while ahead.peek_number() == Some(self.run.field.number) {
            match ahead.record() {
                Ok(Some(_)) => count += 1,
                _ => break,
            }
        }
        Some(count)
    }
}

/// The entries of a map field: each record is a message with `key = 1` and `value = 2`.
struct Entries<'a, 'de> {
    run: RunDe<'a, 'de>,
    /// The value of the entry whose key was handed out.
    value: Option<(ValueKind, Option<Data<'de>>)>,
}

impl<'de> MapAccess<'de> for Entries<'_, 'de> {
    type Error = CodecError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let Some(record) = self.run.next_record()? else {
            return Ok(None);
        };
        let (Data::Len(bytes), ValueKind::Message(entry)) = (record, self.run.field.kind) else {
            return Err(CodecError::field(
                "",
                format!("map entry is a {} record", record.wire_name()),
            ));
        };
        let entry = &plans()[entry];
        let (key_kind, value_kind) = match entry.fields.as_slice() {
            [key, value] => (key.kind, value.kind),
            _ => {
                return Err(CodecError::field(
                    "",
                    "map entry type without key and value",
                ));
            }
        };
        let (mut key, mut value) = (None, None);
        let mut reader = Reader::new(bytes);
        while let Some((number, data)) = reader.record()? {
            match number {
                1 => key = Some(data),
                2 => value = Some(data),
                _ => {}
            }
        }
        self.value = Some((value_kind, value));
        de_special::visit_map_key(key_kind, key, seed).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let depth = self.run.depth;
        match self.value.take() {
            Some((kind, Some(data))) => seed.deserialize(ValueDe { kind, data, depth }),
            // An absent message value is an empty message; an absent scalar its zero.
            Some((kind @ ValueKind::Message(_), None)) => seed.deserialize(ValueDe {
                kind,
                data: Data::Len(&[]),
                depth,
            }),
            Some((kind, None)) => seed.deserialize(ZeroDe(kind)),
            None => Err(CodecError::field(
                "",
                "a value was asked for before its key",
            )),
        }
    }
}
