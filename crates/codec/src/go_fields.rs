//! What the `.proto` files cannot say about a field's JSON form: its Go JSON name where it differs
//! from the proto name, and whether Go's JSON encoder writes its zero value. Read from
//! `proto/go-fields.txt`, which `proto/go-fields.pl` derives from the upstream Go struct tags (see
//! `proto/README.md`), so nothing here is maintained by hand.
//!
//! # Why the zero values matter
//! Go's protobuf encoder writes every non-pointer scalar, zero or not, so a body from kubectl carries
//! `generateName: ""`, `hostNetwork: false` and the like; Go's JSON encoder drops them (`omitempty`).
//! A pointer scalar is written only when set, and then its zero is a value (`replicas: 0`). The
//! other way round, Go's JSON writes a zero non-pointer `Time` as `null` although a Go protobuf
//! encoder may leave it off the wire.

use std::collections::HashMap;
use std::sync::LazyLock;

use prost_reflect::FieldDescriptor;

const TABLE: &str = include_str!("../proto/go-fields.txt");

/// The Go facts of one proto field; fields absent from the table have the defaults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct GoField {
    /// The Go JSON name, when it differs from the proto field name.
    pub(crate) json_name: Option<&'static str>,
    /// A pointer scalar (`pointer`) or a scalar without `omitempty` (`always`): a zero is written.
    pub(crate) keeps_zero: bool,
    /// An embedded struct (`inline`): its members belong to the parent's JSON object.
    pub(crate) inline: bool,
}

static FIELDS: LazyLock<HashMap<&'static str, GoField>> = LazyLock::new(|| parse(TABLE));

/// Per message, its `always` fields: Go writes them even when they are absent from the wire.
static ALWAYS: LazyLock<HashMap<&'static str, Vec<&'static str>>> = LazyLock::new(|| {
    let mut always: HashMap<&str, Vec<&str>> = HashMap::new();
    for line in TABLE.lines() {
        let mut words = line.split_whitespace();
        let Some((message, field)) = words.next().and_then(|name| name.rsplit_once('.')) else {
            continue;
        };
        if words.any(|fact| fact == "always") {
            always.entry(message).or_default().push(field);
        }
    }
    always
});

/// Parses the table: `<message>.<field> fact...` per line, facts `json=<name>`, `pointer`,
/// `always`, `inline`.
fn parse(table: &'static str) -> HashMap<&'static str, GoField> {
    let mut fields = HashMap::new();
    for line in table.lines() {
        let mut words = line.split_whitespace();
        let Some(name) = words.next() else { continue };
        let mut field = GoField::default();
        for fact in words {
            match fact {
                "pointer" | "always" => field.keeps_zero = true,
                "inline" => field.inline = true,
                _ => field.json_name = fact.strip_prefix("json="),
            }
        }
        fields.insert(name, field);
    }
    fields
}

fn lookup(field: &FieldDescriptor) -> GoField {
    FIELDS.get(field.full_name()).copied().unwrap_or_default()
}

/// The JSON name of `field`: go-to-protobuf names proto fields after the JSON names, except where
/// the table says otherwise.
pub(crate) fn json_name(field: &FieldDescriptor) -> &str {
    lookup(field).json_name.unwrap_or_else(|| field.name())
}

/// The proto names of the fields of `message` (full name) that Go writes even when zero.
pub(crate) fn always_written(message: &str) -> &'static [&'static str] {
    ALWAYS.get(message).map_or(&[], Vec::as_slice)
}

/// Whether `field` is an embedded struct whose members are the parent's.
pub(crate) fn is_inline(field: &FieldDescriptor) -> bool {
    lookup(field).inline
}

/// Whether a zero value of the scalar `field` belongs in the JSON.
pub(crate) fn keeps_zero(field: &FieldDescriptor) -> bool {
    lookup(field).keeps_zero
}

#[cfg(test)]
#[path = "go_fields_tests.rs"]
mod tests;
