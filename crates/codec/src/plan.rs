//! Decoding plans: per protobuf message, everything the wire decoder (`de`) needs about each field,
//! computed once from the descriptors and `go_fields` so that decoding an object never consults a
//! descriptor, a hash map or the Go facts table.
//!
//! Built for every message of the schema on first use (a few milliseconds, once per process) and
//! indexed like the descriptor pool, so a nested message's plan is one array index away.

use std::collections::HashMap;
use std::sync::LazyLock;

use prost_reflect::{FieldDescriptor, Kind, MessageDescriptor};

use crate::descriptors::pool;
use crate::go_fields;
use crate::special::Special;

/// The protobuf type of a field's values (of one element, for repeated fields and maps).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ValueKind {
    Bool,
    Int32,
    Int64,
    Uint32,
    Uint64,
    Sint32,
    Sint64,
    Fixed32,
    Fixed64,
    Sfixed32,
    Sfixed64,
    Float,
    Double,
    String,
    Bytes,
    Enum,
    /// A message, by its index in [`plans`].
    Message(usize),
}

impl ValueKind {
    fn of(kind: &Kind, index: &HashMap<String, usize>) -> ValueKind {
        match kind {
            Kind::Bool => ValueKind::Bool,
            Kind::Int32 => ValueKind::Int32,
            Kind::Int64 => ValueKind::Int64,
            Kind::Uint32 => ValueKind::Uint32,
            Kind::Uint64 => ValueKind::Uint64,
            Kind::Sint32 => ValueKind::Sint32,
            Kind::Sint64 => ValueKind::Sint64,
            Kind::Fixed32 => ValueKind::Fixed32,
            Kind::Fixed64 => ValueKind::Fixed64,
            Kind::Sfixed32 => ValueKind::Sfixed32,
            Kind::Sfixed64 => ValueKind::Sfixed64,
            Kind::Float => ValueKind::Float,
            Kind::Double => ValueKind::Double,
            Kind::String => ValueKind::String,
            Kind::Bytes => ValueKind::Bytes,
            Kind::Enum(_) => ValueKind::Enum,
            // Every message of the pool is in the index it was built from.
            Kind::Message(message) => ValueKind::Message(
                index
                    .get(message.full_name())
                    .copied()
                    .unwrap_or(usize::MAX),
            ),
        }
    }

    /// Whether values of this kind may be packed (numbers and booleans).
    pub(crate) fn packable(self) -> bool {
        !matches!(
            self,
            ValueKind::String | ValueKind::Bytes | ValueKind::Message(_)
        )
    }
}

/// How a field appears in JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// One value.
    Single,
    /// A JSON array of its records.
    Repeated,
    /// A JSON object of its entry records (`ValueKind::Message` of the entry type).
    Map,
    /// An embedded Go struct whose members are the parent's.
    Inline,
}

/// One field of a message.
#[derive(Debug)]
pub(crate) struct FieldPlan {
    pub(crate) number: u32,
    /// The Go JSON name.
    pub(crate) json_name: String,
    pub(crate) kind: ValueKind,
    pub(crate) shape: Shape,
    /// Go's JSON writes this field's zero value (a pointer, or no `omitempty`).
    pub(crate) keeps_zero: bool,
}

/// One message.
#[derive(Debug)]
pub(crate) struct MessagePlan {
    /// Position in [`plans`].
    pub(crate) index: usize,
    pub(crate) descriptor: MessageDescriptor,
    pub(crate) special: Option<Special>,
    /// Sorted by `number`.
    pub(crate) fields: Vec<FieldPlan>,
    /// Indexes into `fields` of the fields Go writes even when they are absent from the wire.
    pub(crate) always: Vec<usize>,
}

impl MessagePlan {
    pub(crate) fn name(&self) -> &str {
        self.descriptor.full_name()
    }

    /// The index in `fields` of field `number`.
    pub(crate) fn field(&self, number: u32) -> Option<usize> {
        self.fields.binary_search_by_key(&number, |f| f.number).ok()
    }
}

/// Every message's plan, and the index of each by full name.
struct Plans {
    plans: Vec<MessagePlan>,
    index: HashMap<String, usize>,
}

static PLANS: LazyLock<Plans> = LazyLock::new(|| {
    let messages: Vec<MessageDescriptor> = pool().all_messages().collect();
    let index: HashMap<String, usize> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| (m.full_name().to_string(), i))
        .collect();
    let plans = messages
        .iter()
        .enumerate()
        .map(|(i, m)| plan(i, m, &index))
        .collect();
    Plans { plans, index }
});

/// The plan of every message; `ValueKind::Message` holds positions in it.
pub(crate) fn plans() -> &'static [MessagePlan] {
    &PLANS.plans
}

/// The plan of the message `full_name`.
pub(crate) fn by_name(full_name: &str) -> Option<&'static MessagePlan> {
    PLANS.index.get(full_name).and_then(|&i| plans().get(i))
}

fn plan(
    position: usize,
    message: &MessageDescriptor,
    index: &HashMap<String, usize>,
) -> MessagePlan {
    let mut fields: Vec<FieldPlan> = message.fields().map(|f| field_plan(&f, index)).collect();
    fields.sort_by_key(|f| f.number);
    let always = go_fields::always_written(message.full_name())
        .iter()
        .filter_map(|name| message.get_field_by_name(name))
        .filter_map(|f| fields.iter().position(|p| p.number == f.number()))
        .collect();
    MessagePlan {
        index: position,
        descriptor: message.clone(),
        special: Special::of(message),
        fields,
        always,
    }
}

fn field_plan(field: &FieldDescriptor, index: &HashMap<String, usize>) -> FieldPlan {
    let shape = if field.is_map() {
        Shape::Map
    } else if field.is_list() {
        Shape::Repeated
    } else if go_fields::is_inline(field) && field.kind().as_message().is_some() {
        Shape::Inline
    } else {
        Shape::Single
    };
    FieldPlan {
        number: field.number(),
        json_name: go_fields::json_name(field).to_string(),
        kind: ValueKind::of(&field.kind(), index),
        shape,
        keeps_zero: go_fields::keeps_zero(field),
    }
}
