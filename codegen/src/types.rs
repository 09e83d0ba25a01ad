//! Field types: the syn type a user wrote -> [`FieldType`], the closed set codegen supports.
//!
//! Each accepted type has one OpenAPI schema and one serde behaviour, so the CRD and the Rust
//! type cannot disagree. Anything else is an error with a hint naming the nearest supported type
//! (`u32` -> `i32`/`i64`, `HashMap` -> `BTreeMap` for deterministic output, ...).

use syn::{GenericArgument, PathArguments, Type};

use crate::model::FieldType;
use crate::wellknown::WellKnown;

/// Converts one field type; `Err` holds (what is wrong, hint).
pub(crate) fn field_type(ty: &Type) -> Result<FieldType, (String, String)> {
    let Type::Path(path) = ty else {
        return Err(unsupported(
            ty,
            "use an owned type such as `String`, `Vec<T>` or a struct",
        ));
    };
    if path.qself.is_some() {
        return Err(unsupported(ty, "qualified paths are not supported"));
    }
    let Some(last) = path.path.segments.last() else {
        return Err(unsupported(ty, "empty type path"));
    };
    let name = last.ident.to_string();
    let args = generic_args(&last.arguments);
    let segments: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|segment| segment.ident.to_string())
        .collect();
    if segments == ["serde_json", "Value"] {
        return Ok(FieldType::Json);
    }
    if segments == ["serde_json", "Number"] {
        return Ok(FieldType::Number);
    }
    if name == "Vec" && matches!(args.as_slice(), [inner] if is_u8(inner)) {
        return Ok(FieldType::Bytes);
    }
    if let (Some(well_known), 1, true) =
        (WellKnown::from_name(&name), segments.len(), args.is_empty())
    {
        return Ok(FieldType::WellKnown(well_known));
    }
    let scalar = |field: FieldType| {
        if args.is_empty() {
            Ok(field)
        } else {
            Err(unsupported(ty, "this type takes no generic arguments"))
        }
    };
    match name.as_str() {
        "String" => scalar(FieldType::String),
        "bool" => scalar(FieldType::Bool),
        "i32" => scalar(FieldType::I32),
        "i64" => scalar(FieldType::I64),
        "f64" => scalar(FieldType::F64),
        "Quantity" => scalar(FieldType::Quantity),
        "IntOrString" => scalar(FieldType::IntOrString),
        "Time" => scalar(FieldType::Time),
        "ObjectMeta" => scalar(FieldType::ObjectMeta),
        "Option" | "Vec" => match args.as_slice() {
            [inner] => {
                let inner = Box::new(field_type(inner)?);
                Ok(if name == "Option" {
                    FieldType::Option(inner)
                } else {
                    FieldType::Vec(inner)
                })
            }
            _ => Err(unsupported(
                ty,
                "write `Option<T>` / `Vec<T>` with exactly one type",
            )),
        },
        "BTreeMap" => match args.as_slice() {
            [key, value] if is_string(key) => Ok(FieldType::Map(Box::new(field_type(value)?))),
            _ => Err(unsupported(
                ty,
                "map keys must be `String`: write `BTreeMap<String, T>`",
            )),
        },
        "HashMap" => Err(unsupported(
            ty,
            "use `BTreeMap<String, T>`: its order is deterministic",
        )),
        "u8" | "u16" | "u32" | "u64" | "usize" | "i8" | "i16" | "isize" | "u128" | "i128" => Err(
            unsupported(ty, "OpenAPI integers are int32/int64: use `i32` or `i64`"),
        ),
        "f32" => Err(unsupported(ty, "use `f64`")),
        _ if name.chars().next().is_some_and(char::is_uppercase) && args.is_empty() => {
            // A struct or enum of the same package; the checker verifies it exists.
            if path.path.segments.len() == 1 {
                Ok(FieldType::Named(name))
            } else {
                Err(unsupported(ty, "refer to package types by their bare name"))
            }
        }
        _ => Err(unsupported(
            ty,
            "supported: String, bool, i32, i64, f64, Option, Vec, BTreeMap<String, _>, Vec<u8>, \
             serde_json::Value, serde_json::Number, Quantity, IntOrString, Time, the well-known Kubernetes types \
             (Condition, LabelSelector, ...) and structs and enums of the same package",
        )),
    }
}

fn unsupported(ty: &Type, hint: &str) -> (String, String) {
    let spelled = quote::quote!(#ty).to_string().replace(' ', "");
    (
        format!("unsupported field type `{spelled}`"),
        hint.to_owned(),
    )
}

fn generic_args(arguments: &PathArguments) -> Vec<&Type> {
    match arguments {
        PathArguments::AngleBracketed(args) => args
            .args
            .iter()
            .filter_map(|arg| match arg {
                GenericArgument::Type(ty) => Some(ty),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn is_u8(ty: &Type) -> bool {
    matches!(ty, Type::Path(path) if path.qself.is_none() && path.path.is_ident("u8"))
}

fn is_string(ty: &Type) -> bool {
    matches!(field_type(ty), Ok(FieldType::String))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn convert(src: &str) -> Result<FieldType, (String, String)> {
        field_type(&syn::parse_str::<Type>(src).expect("test type parses"))
    }

    #[test]
    fn nested_containers_convert() {
        let expected = FieldType::Option(Box::new(FieldType::Vec(Box::new(FieldType::Map(
            Box::new(FieldType::Named("Rule".into())),
        )))));
        assert_eq!(convert("Option<Vec<BTreeMap<String, Rule>>>"), Ok(expected));
    }

    #[test]
    fn bytes_json_and_well_known_types_convert() {
        assert_eq!(convert("Vec<u8>"), Ok(FieldType::Bytes));
        assert_eq!(convert("serde_json::Value"), Ok(FieldType::Json));
        assert_eq!(convert("serde_json::Number"), Ok(FieldType::Number));
        assert_eq!(convert("Number"), Ok(FieldType::Named("Number".into())));
        assert_eq!(
            convert("Option<Vec<Condition>>"),
            Ok(FieldType::Option(Box::new(FieldType::Vec(Box::new(
                FieldType::WellKnown(WellKnown::Condition)
            )))))
        );
        assert_eq!(
            convert("Duration"),
            Ok(FieldType::WellKnown(WellKnown::Duration))
        );
    }

    #[test]
    fn a_bare_value_is_a_package_type_not_json() {
        assert_eq!(convert("Value"), Ok(FieldType::Named("Value".into())));
    }

    #[test]
    fn a_qualified_well_known_name_is_rejected() {
        let (message, hint) =
            convert("k8s_openapi::api::core::v1::EnvVar").expect_err("must be rejected");
        assert_eq!(
            message,
            "unsupported field type `k8s_openapi::api::core::v1::EnvVar`"
        );
        assert_eq!(hint, "refer to package types by their bare name");
    }

    #[test]
    fn unsigned_is_rejected_with_hint() {
        let (message, hint) = convert("u32").expect_err("must be rejected");
        assert_eq!(message, "unsupported field type `u32`");
        assert!(hint.contains("i32"));
    }

    #[test]
    fn hash_map_is_rejected() {
        assert_eq!(
            convert("HashMap<String, String>")
                .expect_err("must be rejected")
                .0,
            "unsupported field type `HashMap<String,String>`"
        );
    }
}
