//! Struct-level checks: unique names, resolvable references, no recursion (structural schemas
//! cannot express it), `ObjectMeta` only as a kind's `metadata`, markers that fit their field;
//! and enum checks: distinct values.

use std::collections::BTreeSet;

use super::{find, find_enum, lists, mentions};
use crate::diag::Diagnostics;
use crate::model::{EnumDef, Field, FieldType, Location, Package, StructDef};
use crate::tags::Tag;
use crate::wellknown::WellKnown;

/// Checks every struct and enum of `package`.
pub(super) fn check(package: &Package, diags: &mut Diagnostics) {
    let mut seen = BTreeSet::new();
    let names = package
        .structs
        .iter()
        .map(|def| (&def.name, &def.location))
        .chain(package.enums.iter().map(|def| (&def.name, &def.location)));
    for (name, location) in names {
        check_name(package, name, location, &mut seen, diags);
    }
    for def in &package.enums {
        check_enum(def, diags);
    }
    for def in &package.structs {
        let is_kind = def.tags.iter().any(|(tag, _)| *tag == Tag::GenClient);
        for field in &def.fields {
            check_references(package, def, field, diags);
            if field.ty == FieldType::ObjectMeta && !(is_kind && field.name == "metadata") {
                diags.error(
                    &field.location,
                    format!(
                        "`{}.{}`: `ObjectMeta` is only allowed as a kind's `metadata`",
                        def.name, field.name
                    ),
                    "add `+genclient` to the struct, or use another type",
                );
            }
            check_markers(field, diags);
            check_default_impl(def, field, diags);
            lists::check(package, field, diags);
        }
        if reaches(package, &def.name, def, &mut BTreeSet::new()) {
            diags.error(
                &def.location,
                format!("struct `{}` refers to itself", def.name),
                "structural CRD schemas cannot be recursive",
            );
        }
    }
}

fn check_name<'a>(
    package: &Package,
    name: &'a str,
    location: &Location,
    seen: &mut BTreeSet<&'a str>,
    diags: &mut Diagnostics,
) {
    if !seen.insert(name) {
        diags.error(
            location,
            format!(
                "duplicate type `{name}` in {}/{}",
                package.module, package.version
            ),
            "struct and enum names must be unique within an API version",
        );
    }
    if WellKnown::from_name(name).is_some() {
        diags.error(
            location,
            format!("`{name}` is the name of a well-known Kubernetes type"),
            format!("fields of type `{name}` mean the Kubernetes type: rename this one"),
        );
    }
}

fn check_enum(def: &EnumDef, diags: &mut Diagnostics) {
    let mut values = BTreeSet::new();
    for variant in &def.variants {
        if variant.value.is_empty() || !values.insert(variant.value.as_str()) {
            diags.error(
                &variant.location,
                format!(
                    "variant `{}::{}` has an empty or duplicate value `{}`",
                    def.name, variant.name, variant.value
                ),
                "each variant needs its own non-empty JSON value",
            );
        }
    }
}

/// Generated structs derive `Default`: a type without one must sit in `Option`, `Vec` or a map.
fn check_default_impl(def: &StructDef, field: &Field, diags: &mut Diagnostics) {
    let name = match field.ty {
        FieldType::WellKnown(well_known) if !well_known.has_default() => well_known.name(),
        FieldType::Time => "Time",
        _ => return,
    };
    diags.error(
        &field.location,
        format!(
            "`{}.{}`: `{name}` has no default value",
            def.name, field.name
        ),
        format!("write `Option<{name}>` (generated structs derive `Default`)"),
    );
}

fn check_references(package: &Package, def: &StructDef, field: &Field, diags: &mut Diagnostics) {
    let mut ty = &field.ty;
    while let FieldType::Option(inner) | FieldType::Vec(inner) | FieldType::Map(inner) = ty {
        ty = inner;
    }
    if let FieldType::Named(name) = ty
        && find(package, name).is_none()
        && find_enum(package, name).is_none()
    {
        diags.error(
            &field.location,
            format!(
                "`{}.{}` refers to unknown type `{name}`",
                def.name, field.name
            ),
            format!(
                "declare `struct {name}` or `enum {name}` in apis/{}/{}/",
                package.module, package.version
            ),
        );
    }
}

/// Whether `target` is reachable from the fields of `def`.
fn reaches<'a>(
    package: &'a Package,
    target: &str,
    def: &'a StructDef,
    seen: &mut BTreeSet<&'a str>,
) -> bool {
    for field in &def.fields {
        if mentions(&field.ty, target) {
            return true;
        }
        let mut ty = &field.ty;
        while let FieldType::Option(inner) | FieldType::Vec(inner) | FieldType::Map(inner) = ty {
            ty = inner;
        }
        if let FieldType::Named(name) = ty
            && seen.insert(name.as_str())
            && let Some(next) = find(package, name)
            && reaches(package, target, next, seen)
        {
            return true;
        }
    }
    false
}

fn check_markers(field: &Field, diags: &mut Diagnostics) {
    let markers = &field.markers;
    let base = field.ty.without_option();
    let numeric = matches!(base, FieldType::I32 | FieldType::I64 | FieldType::F64);
    let string = matches!(base, FieldType::String);
    let list = matches!(base, FieldType::Vec(_));
    let mut misplaced = |ok: bool, marker: &str, wants: &str| {
        if !ok {
            diags.error(
                &field.location,
                format!(
                    "`+kubegen:validation:{marker}` on field `{}`, which is not {wants}",
                    field.name
                ),
                format!("`{marker}` only applies to fields that are {wants}"),
            );
        }
    };
    if markers.minimum.is_some() || markers.maximum.is_some() {
        misplaced(numeric, "minimum/maximum", "a number");
    }
    if markers.pattern.is_some() || markers.min_length.is_some() || markers.max_length.is_some() {
        misplaced(string, "pattern/minLength/maxLength", "a string");
    }
    if !markers.enum_values.is_empty() {
        misplaced(string, "enum", "a string");
    }
    if markers.min_items.is_some() || markers.max_items.is_some() {
        misplaced(list, "minItems/maxItems", "a list");
    }
    let is_option = matches!(field.ty, FieldType::Option(_));
    if markers.required && (is_option || markers.optional) {
        diags.error(
            &field.location,
            format!(
                "field `{}` is both optional and `+kubegen:required`",
                field.name
            ),
            "a required field is written without `Option` and without `+kubegen:optional`",
        );
    }
    if let Some(default) = &markers.default
        && serde_json::from_str::<serde_json::Value>(default).is_err()
    {
        diags.error(
            &field.location,
            format!(
                "`+kubegen:default={default}` on `{}` is not JSON",
                field.name
            ),
            "write a JSON value, e.g. `+kubegen:default=\"text\"` or `+kubegen:default=3`",
        );
    }
}

#[cfg(test)]
#[path = "structs_tests.rs"]
mod tests;
