//! Step 4 of `kubegen import`: the IR as annotated Rust, in the layout and marker language the
//! generator reads (`apis/<module>/<version>/mod.rs` and one file per kind).
//!
//! Only names and markers are written: the generator adds derives, serde attributes and impls.
//! Descriptions become doc lines as written (the generator escapes them for rustdoc when it
//! emits the api crate, and copies them verbatim into the CRD); a description with a line that
//! starts with `+` would read as a marker, so it travels in the merge patch instead.

use std::fmt::Write as _;

use super::ir::{FieldIr, StructIr, Ty};
use super::naming::{Names, field_names};

/// The Rust spelling of a type, for a field that is required or not.
fn rust_type(ty: &Ty, names: &Names) -> String {
    match ty {
        Ty::String => "String".to_owned(),
        Ty::Bool => "bool".to_owned(),
        Ty::I32 => "i32".to_owned(),
        Ty::I64 => "i64".to_owned(),
        Ty::Number => "serde_json::Number".to_owned(),
        Ty::IntOrString => "IntOrString".to_owned(),
        Ty::Json => "serde_json::Value".to_owned(),
        Ty::Struct(index) => names.of(*index).to_owned(),
        Ty::Vec(inner) => format!("Vec<{}>", rust_type(inner, names)),
        Ty::Map(inner) => format!("BTreeMap<String, {}>", rust_type(inner, names)),
    }
}

/// `///` lines for a description: `None` when one of its lines would read as a marker.
pub(crate) fn doc_lines(description: &str, indent: &str) -> Option<String> {
    let mut out = String::new();
    for line in description.trim().lines() {
        if line.trim_start().starts_with('+') {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            let _ = writeln!(out, "{indent}///");
        } else {
            let _ = writeln!(out, "{indent}/// {line}");
        }
    }
    Some(out)
}

/// Appends a description and markers as doc lines; a description that cannot be doc lines is
/// folded into the node's merge patch.
fn docs_and_markers(out: &mut String, docs: &str, markers: &[String], indent: &str) {
    let mut markers = markers.to_vec();
    let lines = doc_lines(docs, indent);
    match &lines {
        Some(lines) => out.push_str(lines),
        None => fold_description(&mut markers, docs),
    }
    if lines.is_some() && !docs.trim().is_empty() && !markers.is_empty() {
        let _ = writeln!(out, "{indent}///");
    }
    for marker in markers {
        let _ = writeln!(out, "{indent}/// {marker}");
    }
}

/// Puts `description` into the `+kubegen:schema=` patch (creating it when absent).
fn fold_description(markers: &mut Vec<String>, description: &str) {
    const PREFIX: &str = "+kubegen:schema=";
    let existing = markers.iter().position(|m| m.starts_with(PREFIX));
    let mut patch = existing
        .and_then(|i| serde_json::from_str::<serde_json::Value>(&markers[i][PREFIX.len()..]).ok())
        .unwrap_or_else(|| serde_json::json!({}));
    if let Some(object) = patch.as_object_mut() {
        object.insert("description".to_owned(), description.into());
    }
    let line = format!("{PREFIX}{patch}");
    match existing {
        Some(i) => markers[i] = line,
        None => markers.push(line),
    }
}

/// One struct (a kind when `kind_tags` is `Some`).
pub(crate) fn struct_text(
    def: &StructIr,
    name: &str,
    docs: &str,
    kind_tags: Option<&[String]>,
    names: &Names,
) -> String {
    let mut out = String::new();
    let mut markers: Vec<String> = kind_tags.map(<[String]>::to_vec).unwrap_or_default();
    markers.extend(def.markers.iter().cloned());
    docs_and_markers(&mut out, docs, &markers, "");
    let _ = writeln!(out, "pub struct {name} {{");
    if kind_tags.is_some() {
        out.push_str("    pub metadata: ObjectMeta,\n");
    }
    for (field, (rust, needs_json)) in def.fields.iter().zip(field_names(&def.fields)) {
        field_text(&mut out, field, &rust, needs_json, names);
    }
    out.push_str("}\n");
    out
}

fn field_text(out: &mut String, field: &FieldIr, rust: &str, needs_json: bool, names: &Names) {
    let mut markers = Vec::new();
    if needs_json {
        markers.push(format!("+kubegen:json={}", field.json));
    }
    // A required nullable field is still `Option<Option<T>>`: `null` is a valid value of it,
    // and a present `null` must not read as absent.
    if field.required && field.nullable {
        markers.push("+kubegen:required".to_owned());
    }
    markers.extend(field.markers.iter().cloned());
    docs_and_markers(out, &field.docs, &markers, "    ");
    let ty = rust_type(&field.ty, names);
    if field.nullable {
        let _ = writeln!(out, "    pub {rust}: Option<Option<{ty}>>,");
    } else if field.required {
        let _ = writeln!(out, "    pub {rust}: {ty},");
    } else {
        let _ = writeln!(out, "    pub {rust}: Option<{ty}>,");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_description_line_starting_with_plus_moves_into_the_patch() {
        let mut out = String::new();
        docs_and_markers(&mut out, "Offset:\n+5 means later", &[], "");
        assert_eq!(
            out,
            "/// +kubegen:schema={\"description\":\"Offset:\\n+5 means later\"}\n"
        );
    }

    #[test]
    fn blank_description_lines_stay_paragraph_breaks() {
        assert_eq!(
            doc_lines("One.\n\nTwo.  ", "  ").as_deref(),
            Some("  /// One.\n  ///\n  /// Two.\n")
        );
    }
}
