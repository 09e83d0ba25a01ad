//! The import's IR: the structs, fields and types a schema becomes before names are chosen.
//! `shape.rs` builds it, `markers.rs` reads it (map keys must be required fields of the item),
//! `naming.rs` names it and `render.rs` writes it.

use serde_json::Value;

/// A field's Rust type, before names are chosen.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Ty {
    String,
    Bool,
    I32,
    I64,
    /// `serde_json::Number`: a `number` keeps its JSON form (`1` stays `1`).
    Number,
    IntOrString,
    Json,
    /// Index into [`Builder::structs`].
    Struct(usize),
    Vec(Box<Ty>),
    Map(Box<Ty>),
}

/// A struct of the IR.
#[derive(Clone, Debug)]
pub(crate) struct StructIr {
    /// Naming path: `Gateway`, `Gateway.spec`, `Gateway.spec.listeners` (items and map values are
    /// transparent); the rename table's keys.
    pub(crate) path: String,
    /// The kind it was first built for (the file it is written to).
    pub(crate) owner: String,
    /// Fields sorted by JSON name (the order serde_json keeps a schema's `properties` in).
    pub(crate) fields: Vec<FieldIr>,
    /// Type-level markers (only on a kind: its root node's merge patch and rules).
    pub(crate) markers: Vec<String>,
}

/// A field of a [`StructIr`].
#[derive(Clone, Debug)]
pub(crate) struct FieldIr {
    /// The JSON property name.
    pub(crate) json: String,
    /// The property's `description`.
    pub(crate) docs: String,
    /// Its type.
    pub(crate) ty: Ty,
    /// Listed in the parent's `required`.
    pub(crate) required: bool,
    /// The schema says `nullable: true`: `Option<Option<T>>`, so `null` survives a round trip
    /// apart from absent; required or not (a required one is marked `+kubegen:required`).
    pub(crate) nullable: bool,
    /// Marker lines without `///`, e.g. `+kubegen:validation:MaxLength=253`.
    pub(crate) markers: Vec<String>,
}

/// A string keyword of a schema node, `""` when absent.
pub(super) fn text(node: &Value, key: &str) -> String {
    node.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}
