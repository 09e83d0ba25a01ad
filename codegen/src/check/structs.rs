//! Struct-level checks: unique names, resolvable references, no recursion (structural schemas
//! cannot express it), `ObjectMeta` only as a kind's `metadata`, markers that fit their field;
//! and enum checks: distinct values.

use std::collections::BTreeSet;

use super::lists;
use super::lookup::{find, find_enum, mentions};
use crate::diag::Diagnostics;
use crate::model::Tag;
use crate::model::{EnumDef, Field, FieldType, Location, Package, StructDef, UNKNOWN_FIELDS};
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
            check_options(def, field, diags);
            if field.name == UNKNOWN_FIELDS && package.keeps_unknown_fields(def) {
                diags.error(
                    &field.location,
                    format!(
                        "`{}.{UNKNOWN_FIELDS}`: the name is taken in an imported package",
                        def.name
                    ),
                    "its structs keep the keys they do not know in a field of that name: \
                     rename the field and add `+kubegen:json=` with its JSON name",
                );
            }
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
            check_markers(package, def, field, diags);
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

/// `Option` says "may be absent", which only a field can be: `Option<T>`, or `Option<Option<T>>`
/// for a nullable field (absent, `null` and a value kept apart). An `Option` anywhere else (a
/// list's item, a map's value, a third level) has no JSON meaning the schema could state.
fn check_options(def: &StructDef, field: &Field, diags: &mut Diagnostics) {
    let mut ty = &field.ty;
    let mut depth = 0;
    while let FieldType::Option(inner) = ty {
        ty = inner;
        depth += 1;
    }
    // After the field's own `Option`s, only a list or map can still hold one.
    let mut inside = ty;
    let mut nested = false;
    while let FieldType::Vec(inner) | FieldType::Map(inner) = inside {
        nested |= matches!(**inner, FieldType::Option(_));
        inside = inner;
    }
    let problem = if depth > 2 {
        "more than two `Option`s"
    } else if nested {
        "an `Option` inside a list or map"
    } else {
        return;
    };
    diags.error(
        &field.location,
        format!("`{}.{}` has {problem}", def.name, field.name),
        "write `Option<T>` for a field that may be absent, `Option<Option<T>>` for one that may also be `null`",
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

fn check_markers(package: &Package, def: &StructDef, field: &Field, diags: &mut Diagnostics) {
    let markers = &field.markers;
    let base = field.ty.without_option();
    let numeric = matches!(
        base,
        FieldType::I32 | FieldType::I64 | FieldType::F64 | FieldType::Number
    );
    let string = matches!(base, FieldType::String);
    let list = matches!(base, FieldType::Vec(_));
    let place = format!("`{}.{}`", def.name, field.name);
    let mut misplaced = |used: bool, marker: &str, ok: bool, wants: &str| {
        if used && !ok {
            diags.error(
                &field.location,
                format!("{place}: `+kubegen:validation:{marker}` needs {wants}"),
                format!("`{marker}` only applies to fields that are {wants}"),
            );
        }
    };
    misplaced(markers.minimum.is_some(), "Minimum", numeric, "a number");
    misplaced(markers.maximum.is_some(), "Maximum", numeric, "a number");
    let lone_min = markers.exclusive_minimum && markers.minimum.is_none();
    misplaced(lone_min, "ExclusiveMinimum", false, "a `Minimum` beside it");
    let lone_max = markers.exclusive_maximum && markers.maximum.is_none();
    misplaced(lone_max, "ExclusiveMaximum", false, "a `Maximum` beside it");
    misplaced(markers.pattern.is_some(), "Pattern", string, "a string");
    misplaced(
        markers.min_length.is_some(),
        "MinLength",
        string,
        "a string",
    );
    misplaced(
        markers.max_length.is_some(),
        "MaxLength",
        string,
        "a string",
    );
    misplaced(markers.format.is_some(), "Format", string, "a string");
    misplaced(!markers.enum_values.is_empty(), "Enum", string, "a string");
    misplaced(markers.min_items.is_some(), "MinItems", list, "a list");
    misplaced(markers.max_items.is_some(), "MaxItems", list, "a list");
    misplaced(markers.unique_items, "UniqueItems", list, "a list");
    let conflicting =
        markers.unique_items && markers.list_type.as_deref().is_some_and(|t| t != "set");
    misplaced(
        conflicting,
        "UniqueItems",
        false,
        "no `+kubegen:listType` other than `set`",
    );
    // A nullable field (`Option<Option<T>>`) may be required: present, and `null` or a value.
    let is_option = matches!(field.ty, FieldType::Option(_)) && !field.ty.is_nullable();
    if markers.required && (is_option || markers.optional) {
        diags.error(
            &field.location,
            format!("{place} is both optional and `+kubegen:required`"),
            "a required field is written without `Option` (or as a nullable \
             `Option<Option<T>>`) and without `+kubegen:optional`",
        );
    }
    if let Some(default) = &markers.default {
        let problem = match serde_json::from_str::<serde_json::Value>(default) {
            Err(_) => Some("is not JSON".to_owned()),
            Ok(value) => crate::emit::defaults::tokens(package, &field.ty, &value).err(),
        };
        if let Some(problem) = problem {
            diags.error(
                &field.location,
                format!("{place}: `+kubegen:default={default}`: {problem}"),
                "write a JSON value of the field's type, e.g. `+kubegen:default=\"text\"` or \
                 `+kubegen:default=3`",
            );
        }
    }
}

#[cfg(test)]
#[path = "structs_tests.rs"]
mod tests;
