//! Apply configurations of the user's types (`apis/`): one per struct, with the struct's field
//! and JSON names; kinds also get `apiVersion` and `kind`, `metadata` becomes
//! `meta::v1::ObjectMetaApplyConfiguration`, enums stay the api crate's enums and well-known
//! types use the built-in configurations.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::config_type::{ConfigField, ConfigType, KindInfo, Shape, config_path};
use crate::emit::ctx::EmitCtx;
use crate::model::{FieldType, Package, Verb};
use crate::names;

/// The configurations of every struct of every user package, in package and file order.
pub(super) fn types(ctx: &EmitCtx<'_>, api: &Ident) -> Vec<ConfigType> {
    let input = ctx.config.input.display();
    let mut out = Vec::new();
    for package in &ctx.model.packages {
        for def in &package.structs {
            let kind = package.kinds.iter().find(|kind| kind.name == def.name);
            let mut fields = Vec::new();
            if kind.is_some() {
                for (rust, json) in [("api_version", "apiVersion"), ("kind", "kind")] {
                    fields.push(ConfigField {
                        rust: rust.to_owned(),
                        json: json.to_owned(),
                        shape: Shape::One(quote!(::std::string::String)),
                        nullable: false,
                    });
                }
            }
            fields.extend(def.fields.iter().map(|field| ConfigField {
                rust: field.name.clone(),
                json: field.json_name.clone(),
                shape: shape(package, api, field.ty.without_option()),
                nullable: field.ty.is_nullable(),
            }));
            let (module, version) = (
                names::ident(&package.module),
                names::ident(&package.version),
            );
            let ty = names::ident(&def.name);
            out.push(ConfigType {
                at: (package.module.clone(), package.version.clone()),
                name: def.name.clone(),
                source: format!(
                    "{input}/{}/{}: {}",
                    package.module, package.version, def.name
                ),
                fields,
                kind: kind.map(|kind| KindInfo {
                    scope: kind.scope,
                    has_status: kind.has_status && kind.has(Verb::UpdateStatus),
                    api_type: quote!(::#api::#module::#version::#ty),
                }),
            });
        }
    }
    out
}

fn shape(package: &Package, api: &Ident, ty: &FieldType) -> Shape {
    match ty {
        FieldType::Vec(inner) => Shape::List(element(package, api, inner)),
        FieldType::Map(inner) => Shape::Map(element(package, api, inner)),
        other => Shape::One(element(package, api, other)),
    }
}

fn element(package: &Package, api: &Ident, ty: &FieldType) -> TokenStream {
    match ty {
        FieldType::ObjectMeta => config_path("meta", "v1", "ObjectMeta"),
        FieldType::WellKnown(wk) => super::builtin::well_known(*wk),
        FieldType::Named(name) if package.enums.iter().any(|def| &def.name == name) => {
            let (module, version) = (
                names::ident(&package.module),
                names::ident(&package.version),
            );
            let ty = names::ident(name);
            quote!(::#api::#module::#version::#ty)
        }
        FieldType::Named(name) => config_path(&package.module, &package.version, name),
        FieldType::Option(inner) => element(package, api, inner),
        FieldType::Vec(inner) => {
            let inner = element(package, api, inner);
            quote!(::std::vec::Vec<#inner>)
        }
        FieldType::Map(inner) => {
            let inner = element(package, api, inner);
            quote!(::std::collections::BTreeMap<::std::string::String, #inner>)
        }
        scalar => names::rust_type(scalar),
    }
}
