//! The applyconfigurations crate: for every kind (the user's and the built-in ones) and every type
//! it nests, a `<Type>ApplyConfiguration` whose fields are all optional and sent only when set,
//! with `with_<field>` builders, a constructor per kind that fills in `apiVersion`, `kind`, name
//! and namespace, and `extract_<kind>` functions. Mirrors code-generator's applyconfiguration-gen
//! and client-go's `applyconfigurations/` package.
//!
//! # Why
//! A server-side apply sends the fields its manager wants to own, and only those. A full API type
//! cannot say "not set": k8s-openapi's `StatefulSetSpec::default()` serialises the required
//! `selector` and `serviceName`, so applying it takes ownership of fields the caller never meant
//! to set. Here every field is an `Option` skipped when `None`.
//!
//! # Where the types come from
//! - User kinds: the model (`apis/`), type by type (`user.rs`).
//! - Built-in kinds (`builtins.toml`) and the well-known types user structs name: the upstream
//!   OpenAPI v3 component schemas shipped in `codegen/openapi/wellknown.json` (`builtin.rs`), only
//!   the types reachable from those roots, with the schema's field and JSON names.
//!
//! Generated code holds names: struct fields, one-line builders and constructors, and `extract_*`
//! functions delegating to `kubegen_client::extract`, which reads the field sets.

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::quote;

use super::ctx::{EmitCtx, GroupVersionKey};
use crate::Error;
use crate::generated::Files;
use crate::model::Scope;
use crate::names;

mod builtin;
pub(crate) mod config_type;
mod user;

use config_type::{ConfigField, ConfigType, KindInfo, Shape, config_ident};

/// Emits `crates/generated/applyconfigurations`.
pub(super) fn emit(ctx: &EmitCtx<'_>, files: &mut Files) -> Result<(), Error> {
    let api = ctx.config.crate_ident("api");
    let mut types = builtin::types(ctx, &api)?;
    types.extend(user::types(ctx, &api));
    let input = ctx.config.input.display();
    let mut modules: BTreeMap<GroupVersionKey, (String, Vec<TokenStream>)> = BTreeMap::new();
    for ty in &types {
        let (module, version) = &ty.at;
        let user = ctx
            .model
            .packages
            .iter()
            .any(|p| (&p.module, &p.version) == (module, version));
        let entry = modules.entry(ty.at.clone()).or_insert_with(|| {
            let source = if user {
                format!("{input}/{module}/{version}")
            } else {
                ctx.builtins_source()
            };
            (source, Vec::new())
        });
        entry.1.push(type_tokens(ty));
    }
    let bodies = modules
        .into_iter()
        .map(|((module, version), (source, items))| {
            let doc = format!(" Apply configurations of `{module}/{version}`.");
            let body = quote! {
                #![doc = #doc]
                #(#items)*
            };
            ((module, version), source, body)
        })
        .collect();
    let doc = " Apply configurations: every kind and nested type with all fields optional and \
sent only when set, for server-side apply (client-go's `applyconfigurations`).\n\n \
`apps::v1::StatefulSetApplyConfiguration::new(\"web\", \"ns\").with_spec(...)` builds one; \
the typed clients' `apply` sends it; `extract_<kind>` reads back what a field manager owns.";
    crate::emit::tree::module_tree(ctx, "applyconfigurations", doc, Vec::new(), bodies, files)
}

/// The struct, its builders, and for kinds the constructor and `extract_*` functions.
fn type_tokens(ty: &ConfigType) -> TokenStream {
    let name = config_ident(&ty.name);
    let doc = format!(
        " Apply configuration of `{}`: every field optional and sent only when set.",
        ty.source
    );
    let fields = ty.fields.iter().map(|field| {
        let (ident, json) = (names::ident(&field.rust), &field.json);
        let ty = match &field.shape {
            Shape::One(ty) => quote!(#ty),
            Shape::List(item) => quote!(::std::vec::Vec<#item>),
            Shape::Map(value) => {
                quote!(::std::collections::BTreeMap<::std::string::String, #value>)
            }
        };
        if field.nullable {
            let doc = format!(" `{json}`: unset, `null` (`Some(None)`) or a value.");
            return quote! {
                #[doc = #doc]
                #[serde(rename = #json, default, skip_serializing_if = "Option::is_none", with = "::serde_with::rust::double_option")]
                pub #ident: ::std::option::Option<::std::option::Option<#ty>>,
            };
        }
        let doc = format!(" `{json}`.");
        quote! {
            #[doc = #doc]
            #[serde(rename = #json, default, skip_serializing_if = "Option::is_none")]
            pub #ident: ::std::option::Option<#ty>,
        }
    });
    let builders = ty.fields.iter().map(builder);
    let kind = ty.kind.as_ref().map(|kind| kind_tokens(ty, kind));
    quote! {
        #[doc = #doc]
        #[derive(Clone, Debug, Default, PartialEq, ::serde::Serialize, ::serde::Deserialize)]
        pub struct #name {
            #(#fields)*
        }
        impl #name {
            #(#builders)*
        }
        #kind
    }
}

/// `with_<field>`, and for a nullable field also `with_<field>_null`.
fn builder(field: &ConfigField) -> TokenStream {
    let (ident, json) = (names::ident(&field.rust), &field.json);
    let method = names::ident(&format!("with_{}", field.rust));
    // A nullable field holds `Option<Option<_>>`: the builders below reach its inner value.
    let (value, set_value) = match field.nullable {
        true => (
            quote!(self.#ident.get_or_insert(None)),
            quote!(self.#ident = Some(Some(value))),
        ),
        false => (quote!(self.#ident), quote!(self.#ident = Some(value))),
    };
    let set = match &field.shape {
        Shape::One(ty) => {
            let doc = format!(" Sets `{json}`.");
            quote! {
                #[doc = #doc]
                pub fn #method(mut self, value: #ty) -> Self {
                    #set_value;
                    self
                }
            }
        }
        Shape::List(item) => {
            let doc = format!(" Appends to `{json}`.");
            quote! {
                #[doc = #doc]
                pub fn #method(mut self, values: impl IntoIterator<Item = #item>) -> Self {
                    #value.get_or_insert_with(Vec::new).extend(values);
                    self
                }
            }
        }
        Shape::Map(value_ty) => {
            let doc = format!(" Inserts into `{json}`.");
            quote! {
                #[doc = #doc]
                pub fn #method(mut self, entries: impl IntoIterator<Item = (::std::string::String, #value_ty)>) -> Self {
                    #value.get_or_insert_with(Default::default).extend(entries);
                    self
                }
            }
        }
    };
    if !field.nullable {
        return set;
    }
    let null = names::ident(&format!("with_{}_null", field.rust));
    let doc =
        format!(" Sets `{json}` to `null`, which an apply stores and this manager then owns.");
    quote! {
        #set
        #[doc = #doc]
        pub fn #null(mut self) -> Self {
            self.#ident = Some(None);
            self
        }
    }
}

/// The constructor and the `extract_*` functions of a kind.
fn kind_tokens(ty: &ConfigType, kind: &KindInfo) -> TokenStream {
    let name = config_ident(&ty.name);
    let api_type = &kind.api_type;
    let meta = quote!(crate::meta::v1::ObjectMetaApplyConfiguration);
    let (args, namespace, scope_doc) = match kind.scope {
        Scope::Namespaced => (
            quote!(name: &str, namespace: &str),
            quote!(.with_namespace(namespace.to_owned())),
            "name and namespace",
        ),
        Scope::Cluster => (quote!(name: &str), quote!(), "name"),
    };
    let new_doc = format!(
        " A `{}` apply configuration with `apiVersion`, `kind` and the {scope_doc} set \
(client-go's `{}(...)` constructor).",
        ty.name, ty.name
    );
    let snake = names::snake(&ty.name);
    let extract = names::ident(&format!("extract_{snake}"));
    let extract_doc = format!(
        " The fields of `object` that `field_manager` owns through apply, as an apply \
configuration (client-go's `Extract{}`): modify it and apply it again with the same manager.",
        ty.name
    );
    let status = kind.has_status.then(|| {
        let extract_status = names::ident(&format!("extract_{snake}_status"));
        let doc = format!(
            " As [`{extract}`] for the `status` subresource (client-go's `Extract{}Status`).",
            ty.name
        );
        quote! {
            #[doc = #doc]
            ///
            /// # Errors
            /// As `kubegen_client::extract`.
            pub fn #extract_status(object: &#api_type, field_manager: &str) -> ::kubegen_client::Result<#name> {
                ::kubegen_client::extract(object, field_manager, Some("status"))
            }
        }
    });
    quote! {
        impl #name {
            #[doc = #new_doc]
            pub fn new(#args) -> Self {
                Self::default()
                    .with_api_version(<#api_type as ::k8s_openapi::Resource>::API_VERSION.to_owned())
                    .with_kind(<#api_type as ::k8s_openapi::Resource>::KIND.to_owned())
                    .with_metadata(#meta::default().with_name(name.to_owned()) #namespace)
            }
        }
        #[doc = #extract_doc]
        ///
        /// # Errors
        /// As `kubegen_client::extract`.
        pub fn #extract(object: &#api_type, field_manager: &str) -> ::kubegen_client::Result<#name> {
            ::kubegen_client::extract(object, field_manager, None)
        }
        #status
    }
}
