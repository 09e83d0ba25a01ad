//! `+kubegen:default=<json>` as Rust: the expression a generated `Default` impl gives a field.
//!
//! The CRD's `default` is applied by the API server (apiextensions-apiserver's structural
//! defaulting); client-go types do not know about it, so `Foo{}` in Go is the zero value. The
//! issue asked for more: `Default::default()` of a generated type gives what the server would
//! fill in, so an object built in Rust reads like the one a `get` returns. Hence:
//! - a field with a default gets it; an `Option` field gets `Some(default)`, which is what the
//!   server stores when the field is absent (`None` would be an object the server never returns);
//! - a struct-typed field with an object default gets a struct literal of the fields written and
//!   `..Default::default()` for the rest, so nested defaults of optional fields apply as on the
//!   server (which defaults inside a default it has just set). The default must hold every
//!   required field: a v1.36 server rejects the CRD otherwise (`default.backoff: Required value`).
//!
//! The checker calls [`tokens`] too, so a default it accepts is one the emitter can write.

use proc_macro2::{Literal, TokenStream};
use quote::{ToTokens as _, quote};
use serde_json::Value;

use crate::model::{FieldType, Package};
use crate::names;

/// The Rust expression of `value` as a `ty`, or why `value` does not fit `ty`.
pub(crate) fn tokens(
    package: &Package,
    ty: &FieldType,
    value: &Value,
) -> Result<TokenStream, String> {
    let mismatch = |wants: &str| Err(format!("`{value}` is not {wants}"));
    match (ty, value) {
        (FieldType::String, Value::String(text)) => Ok(quote!(::std::string::String::from(#text))),
        (FieldType::String, _) => mismatch("a JSON string"),
        (FieldType::Bool, Value::Bool(flag)) => Ok(quote!(#flag)),
        (FieldType::Bool, _) => mismatch("`true` or `false`"),
        (FieldType::I32, _) => match value.as_i64().and_then(|v| i32::try_from(v).ok()) {
            Some(v) => Ok(Literal::i32_unsuffixed(v).into_token_stream()),
            None => mismatch("a 32-bit integer"),
        },
        (FieldType::I64, _) => match value.as_i64() {
            Some(v) => Ok(Literal::i64_unsuffixed(v).into_token_stream()),
            None => mismatch("a 64-bit integer"),
        },
        (FieldType::F64, _) => match value.as_f64() {
            Some(v) => Ok(Literal::f64_suffixed(v).into_token_stream()),
            None => mismatch("a number"),
        },
        // `Number` has no const constructor for a fraction: those stay in `+kubegen:schema`.
        (FieldType::Number, _) => match value.as_i64() {
            Some(v) => {
                let v = Literal::i64_suffixed(v);
                Ok(quote!(::serde_json::Number::from(#v)))
            }
            None => {
                mismatch("a whole number (a `serde_json::Number` default cannot be a fraction)")
            }
        },
        (FieldType::Quantity, Value::String(text)) => Ok(quote!(
            ::k8s_openapi::apimachinery::pkg::api::resource::Quantity(
                ::std::string::String::from(#text)
            )
        )),
        (FieldType::Quantity, _) => mismatch("a quantity string such as \"4Gi\""),
        (FieldType::IntOrString, Value::String(text)) => Ok(quote!(
            ::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(
                ::std::string::String::from(#text)
            )
        )),
        (FieldType::IntOrString, _) => match value.as_i64().and_then(|v| i32::try_from(v).ok()) {
            Some(v) => {
                let v = Literal::i32_unsuffixed(v);
                Ok(quote!(::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(#v)))
            }
            None => mismatch("a 32-bit integer or a string"),
        },
        (FieldType::Option(inner), _) => {
            let inner = tokens(package, inner, value)?;
            Ok(quote!(::std::option::Option::Some(#inner)))
        }
        (FieldType::Vec(inner), Value::Array(items)) => {
            let items = items
                .iter()
                .map(|item| tokens(package, inner, item))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(quote!(::std::vec![#(#items),*]))
        }
        (FieldType::Vec(_), _) => mismatch("a JSON array"),
        (FieldType::Map(inner), Value::Object(entries)) => {
            let entries = entries
                .iter()
                .map(|(key, item)| {
                    let item = tokens(package, inner, item)?;
                    Ok(quote!((::std::string::String::from(#key), #item)))
                })
                .collect::<Result<Vec<_>, String>>()?;
            Ok(quote!(::std::collections::BTreeMap::from([#(#entries),*])))
        }
        (FieldType::Map(_), _) => mismatch("a JSON object"),
        (FieldType::Named(name), _) => named(package, name, value),
        (FieldType::Time, _) => unsupported("Time"),
        (FieldType::Bytes, _) => unsupported("Vec<u8>"),
        (FieldType::Json, _) => unsupported("serde_json::Value"),
        (FieldType::ObjectMeta, _) => unsupported("ObjectMeta"),
        (FieldType::WellKnown(well_known), _) => unsupported(well_known.name()),
    }
}

fn unsupported(name: &str) -> Result<TokenStream, String> {
    Err(format!(
        "a default on a `{name}` field is not supported (only strings, numbers, booleans, \
         quantities, int-or-strings, enums, structs of the package, and lists and maps of them)"
    ))
}

/// An enum variant by its JSON value, or a struct literal from a JSON object.
fn named(package: &Package, name: &str, value: &Value) -> Result<TokenStream, String> {
    let ident = names::ident(name);
    if let Some(def) = package.enums.iter().find(|def| def.name == name) {
        let variant = def
            .variants
            .iter()
            .find(|variant| Some(variant.value.as_str()) == value.as_str());
        return match variant {
            Some(variant) => {
                let variant = names::ident(&variant.name);
                Ok(quote!(#ident::#variant))
            }
            None => {
                let values: Vec<&str> = def.variants.iter().map(|v| v.value.as_str()).collect();
                Err(format!("`{value}` is not one of {values:?}"))
            }
        };
    }
    let (Some(def), Value::Object(entries)) =
        (package.structs.iter().find(|def| def.name == name), value)
    else {
        return Err(format!("`{value}` is not a JSON object"));
    };
    let fields = entries
        .iter()
        .map(|(key, item)| {
            let field = def
                .fields
                .iter()
                .find(|field| &field.json_name == key)
                .ok_or_else(|| format!("`{key}` is not a field of `{name}`"))?;
            let field_ident = names::ident(&field.name);
            let item = tokens(package, &field.ty, item)?;
            Ok(quote!(#field_ident: #item,))
        })
        .collect::<Result<Vec<_>, String>>()?;
    // The server validates a default as written: nested defaults do not fill its required fields.
    if let Some(missing) = def
        .fields
        .iter()
        .find(|field| field.is_required() && !entries.contains_key(&field.json_name))
    {
        return Err(format!(
            "`{value}` lacks `{}`, a required field of `{name}` (the API server checks an object \
             default as written, without its nested defaults)",
            missing.json_name
        ));
    }
    Ok(quote!(#ident { #(#fields)* ..::std::default::Default::default() }))
}
