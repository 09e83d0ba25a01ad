//! The api crate: user types with derives and serde attributes, `<Kind>List` aliases, the
//! k8s-openapi traits (which give kube-core's `Resource` through its blanket impl), and
//! re-exports of the built-in kinds. Replaces deepcopy-gen (`derive(Clone)`) and the hand-written
//! `types.go` + `register.go` of a client-go project.

use proc_macro2::TokenStream;
use quote::quote;

use super::ctx::{EmitCtx, GroupVersionKey, doc_attrs, inner_doc_attrs};
use super::defaults;
use crate::Error;
use crate::generated::Files;
use crate::model::{
    BuiltinPackage, EnumDef, Field, FieldType, Kind, Package, Scope, StructDef, UNKNOWN_FIELDS,
};
use crate::names;

/// Emits `crates/generated/api`.
pub(super) fn emit(ctx: &EmitCtx<'_>, files: &mut Files) -> Result<(), Error> {
    let input = ctx.config.input.display();
    let mut bodies: Vec<(GroupVersionKey, String, TokenStream)> = Vec::new();
    for package in &ctx.model.packages {
        let source = format!("{input}/{}/{}", package.module, package.version);
        bodies.push((
            (package.module.clone(), package.version.clone()),
            source,
            package_body(ctx, package)?,
        ));
    }
    for builtin in &ctx.model.builtins {
        bodies.push((
            (builtin.module.clone(), builtin.version.clone()),
            ctx.builtins_source(),
            builtin_body(builtin),
        ));
    }
    let doc = " API types: the structs of `apis/` with serde and `Resource` impls, plus the \
built-in kinds re-exported from k8s-openapi.\n\n Paths follow `<group module>::<version>::<Kind>`, \
e.g. `police::v1beta1::WhiteList` or `apps::v1::Deployment`. Objects are plain data: \
`Clone` replaces client-go's deepcopy-gen.";
    super::tree::module_tree(ctx, "api", doc, Vec::new(), bodies, files)
}

fn package_body(ctx: &EmitCtx<'_>, package: &Package) -> Result<TokenStream, Error> {
    let doc = format!(" `{}/{}`.", package.group, package.version);
    let separator = if package.docs.is_empty() {
        quote!()
    } else {
        quote!(#![doc = ""])
    };
    let inner_docs = inner_doc_attrs(&package.docs);
    let structs = package
        .structs
        .iter()
        .map(|def| {
            let kind = package.kinds.iter().find(|kind| kind.name == def.name);
            struct_tokens(package, def, kind)
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let enums = package.enums.iter().map(enum_tokens);
    let conversions = super::conversion::spoke_tokens(ctx.model, package);
    Ok(quote! {
        #![doc = #doc]
        #separator
        #inner_docs
        #(#structs)*
        #(#enums)*
        #conversions
    })
}

/// A unit-variant enum serialized as its variants' strings. The first variant is the Rust
/// `Default` (the structs holding it derive `Default`); the CRD default is `+kubegen:default=`.
fn enum_tokens(def: &EnumDef) -> TokenStream {
    let name = names::ident(&def.name);
    let docs = if def.docs.is_empty() {
        let line = format!(" `{}`.", def.name);
        quote!(#[doc = #line])
    } else {
        doc_attrs(&def.docs)
    };
    let variants = def.variants.iter().enumerate().map(|(index, variant)| {
        let ident = names::ident(&variant.name);
        let docs = if variant.docs.is_empty() {
            let line = format!(" `{}`.", variant.value);
            quote!(#[doc = #line])
        } else {
            doc_attrs(&variant.docs)
        };
        let default = (index == 0).then(|| quote!(#[default]));
        let value = &variant.value;
        let rename = (variant.value != variant.name).then(|| quote!(#[serde(rename = #value)]));
        quote! {
            #docs
            #default
            #rename
            #ident,
        }
    });
    quote! {
        #docs
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, ::serde::Serialize, ::serde::Deserialize)]
        pub enum #name {
            #(#variants)*
        }
    }
}

fn struct_tokens(
    package: &Package,
    def: &StructDef,
    kind: Option<&Kind>,
) -> Result<TokenStream, Error> {
    let name = names::ident(&def.name);
    let docs = if def.docs.is_empty() {
        let line = format!(" `{}`.", def.name);
        quote!(#[doc = #line])
    } else {
        doc_attrs(&def.docs)
    };
    let fields = def.fields.iter().map(field_tokens);
    let unknown = package.keeps_unknown_fields(def).then(|| {
        let ident = names::ident(UNKNOWN_FIELDS);
        quote! {
            #[doc = " The fields this type does not know (an owner's newer release added them), kept so"]
            #[doc = " that an object written back loses none of them."]
            #[serde(flatten)]
            pub #ident: ::std::collections::BTreeMap<::std::string::String, ::serde_json::Value>,
        }
    });
    let default_impl = default_impl(package, def)?;
    let derive_default = default_impl.is_none().then(|| quote!(Default,));
    // Kinds write `apiVersion` and `kind` on serialization, so their Serialize is generated below.
    let derives = if kind.is_some() {
        quote!(#[derive(Clone, Debug, #derive_default PartialEq, ::serde::Deserialize)])
    } else {
        quote!(#[derive(Clone, Debug, #derive_default PartialEq, ::serde::Serialize, ::serde::Deserialize)])
    };
    let kind_impls = kind.map(|kind| kind_tokens(def, kind));
    Ok(quote! {
        #docs
        #derives
        #[serde(rename_all = "camelCase")]
        pub struct #name {
            #(#fields)*
            #unknown
        }
        #default_impl
        #kind_impls
    })
}

/// A written-out `Default` giving the `+kubegen:default=` values (see `defaults.rs` for why);
/// `None` (derive it) when no field has one.
fn default_impl(package: &Package, def: &StructDef) -> Result<Option<TokenStream>, Error> {
    if def
        .fields
        .iter()
        .all(|field| field.markers.default.is_none())
    {
        return Ok(None);
    }
    let fields = def
        .fields
        .iter()
        .map(|field| {
            let ident = names::ident(&field.name);
            let Some(text) = &field.markers.default else {
                return Ok(quote!(#ident: ::std::default::Default::default(),));
            };
            let value = serde_json::from_str(text)
                .map_err(|error| error.to_string())
                .and_then(|value| defaults::tokens(package, &field.ty, &value))
                .map_err(|problem| {
                    Error::Internal(format!(
                        "default of `{}.{}` passed the checker but: {problem}",
                        def.name, field.name
                    ))
                })?;
            Ok(quote!(#ident: #value,))
        })
        .chain(package.keeps_unknown_fields(def).then(|| {
            let ident = names::ident(UNKNOWN_FIELDS);
            Ok(quote!(#ident: ::std::default::Default::default(),))
        }))
        .collect::<Result<Vec<_>, Error>>()?;
    let name = names::ident(&def.name);
    let doc = " The declared defaults (`+kubegen:default=`), as the API server applies them; `Default::default()` for the other fields.";
    Ok(Some(quote! {
        impl ::std::default::Default for #name {
            #[doc = #doc]
            fn default() -> Self {
                Self { #(#fields)* }
            }
        }
    }))
}

fn field_tokens(field: &Field) -> TokenStream {
    let name = names::ident(&field.name);
    let ty = names::rust_type(&field.ty);
    let docs = if field.docs.is_empty() {
        let line = if field.name == "metadata" {
            " Standard object metadata.".to_owned()
        } else {
            format!(" `{}`.", field.json_name)
        };
        quote!(#[doc = #line])
    } else {
        doc_attrs(&field.docs)
    };
    let serde = match serde_skip(field) {
        // serde reads `null` into the outer `None`; serde_with's `double_option` keeps it apart.
        Some(skip) if field.ty.is_nullable() => quote!(
            #[serde(default, skip_serializing_if = #skip, with = "::serde_with::rust::double_option")]
        ),
        Some(skip) => quote!(#[serde(default, skip_serializing_if = #skip)]),
        None if defaults_when_absent(field) => quote!(#[serde(default)]),
        None => quote!(),
    };
    // `+kubegen:json=`: a JSON name that `rename_all = "camelCase"` cannot give (`podIP`).
    let json = &field.json_name;
    let rename =
        (names::camel(&field.name) != field.json_name).then(|| quote!(#[serde(rename = #json)]));
    quote! {
        #docs
        #serde
        #rename
        pub #name: #ty,
    }
}

/// The `skip_serializing_if` predicate of a field, if it has one.
fn serde_skip(field: &Field) -> Option<&'static str> {
    match &field.ty {
        FieldType::Option(_) => Some("Option::is_none"),
        FieldType::Vec(_) if field.markers.optional => Some("Vec::is_empty"),
        FieldType::Map(_) if field.markers.optional => {
            Some("::std::collections::BTreeMap::is_empty")
        }
        _ => None,
    }
}

/// Every field tolerates absence when read, as Go's decoder and k8s-openapi's do: a missing field
/// is its type's `Default` (Go's zero value; for a struct with `+kubegen:default` markers, those
/// defaults). The API server relies on it: while it prunes a server-side apply it sends a
/// conversion webhook *partial* objects (only the fields one manager owns), and a required field
/// that refused to be absent would fail every second apply. Checking that a field is present is
/// the CRD schema's `required`, enforced by the server, not the decoder's.
fn defaults_when_absent(field: &Field) -> bool {
    !matches!(field.ty, FieldType::Option(_))
}

/// `Serialize` (with `apiVersion`/`kind` first, like k8s-openapi's types), the k8s-openapi traits
/// and the list alias of one kind.
fn kind_tokens(def: &StructDef, kind: &Kind) -> TokenStream {
    let name = names::ident(&kind.name);
    let list = names::for_kind(kind).list;
    let (api_version, group, kind_name, version, plural) = (
        kind.api_version(),
        &kind.group,
        &kind.name,
        &kind.version,
        &kind.plural,
    );
    let list_kind = format!("{}List", kind.name);
    let scope = match kind.scope {
        Scope::Namespaced => quote!(::k8s_openapi::NamespaceResourceScope),
        Scope::Cluster => quote!(::k8s_openapi::ClusterResourceScope),
    };
    let field_count = def.fields.len() + 2;
    let writes = def.fields.iter().map(|field| {
        let (ident, json) = (names::ident(&field.name), &field.json_name);
        match serde_skip(field) {
            Some(skip) => {
                let skip: syn::Path = syn::parse_str(skip).unwrap_or_else(|_| syn::parse_quote!(Option::is_none));
                quote! {
                    if #skip(&self.#ident) { state.skip_field(#json)?; } else { state.serialize_field(#json, &self.#ident)?; }
                }
            }
            None => quote!(state.serialize_field(#json, &self.#ident)?;),
        }
    });
    let list_doc = format!(" A list of `{}`, as returned by `list`.", kind.name);
    quote! {
        impl ::serde::Serialize for #name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
                use ::serde::ser::SerializeStruct as _;
                let mut state = serializer.serialize_struct(#kind_name, #field_count)?;
                state.serialize_field("apiVersion", <Self as ::k8s_openapi::Resource>::API_VERSION)?;
                state.serialize_field("kind", <Self as ::k8s_openapi::Resource>::KIND)?;
                #(#writes)*
                state.end()
            }
        }
        impl ::k8s_openapi::Resource for #name {
            const API_VERSION: &'static str = #api_version;
            const GROUP: &'static str = #group;
            const KIND: &'static str = #kind_name;
            const VERSION: &'static str = #version;
            const URL_PATH_SEGMENT: &'static str = #plural;
            type Scope = #scope;
        }
        impl ::k8s_openapi::ListableResource for #name {
            const LIST_KIND: &'static str = #list_kind;
        }
        impl ::k8s_openapi::Metadata for #name {
            type Ty = ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
            fn metadata(&self) -> &Self::Ty {
                &self.metadata
            }
            fn metadata_mut(&mut self) -> &mut Self::Ty {
                &mut self.metadata
            }
        }
        #[doc = #list_doc]
        pub type #list = ::kube_core::ObjectList<#name>;
    }
}

fn builtin_body(builtin: &BuiltinPackage) -> TokenStream {
    let module = names::ident(&builtin.module);
    let version = names::ident(&builtin.version);
    let api_version = if builtin.group.is_empty() {
        builtin.version.clone()
    } else {
        format!("{}/{}", builtin.group, builtin.version)
    };
    let doc = format!(
        " `{api_version}`: built-in kinds re-exported from `k8s_openapi::api::{}::{}`.",
        builtin.module, builtin.version
    );
    let kinds = builtin.kinds.iter().map(|kind| names::ident(&kind.name));
    let lists = builtin.kinds.iter().map(|kind| {
        let (ty, list) = (names::ident(&kind.name), names::for_kind(kind).list);
        let doc = format!(" A list of `{}`, as returned by `list`.", kind.name);
        quote! {
            #[doc = #doc]
            pub type #list = ::kube_core::ObjectList<#ty>;
        }
    });
    // A wrong scope in the built-ins list would give the typed client a wrong URL at runtime;
    // these constants make it a compile error instead (the two PhantomData types must match).
    let scope_checks = builtin.kinds.iter().map(|kind| {
        let ty = names::ident(&kind.name);
        let scope = match kind.scope {
            Scope::Namespaced => quote!(::k8s_openapi::NamespaceResourceScope),
            Scope::Cluster => quote!(::k8s_openapi::ClusterResourceScope),
        };
        quote! {
            const _: ::std::marker::PhantomData<<#ty as ::k8s_openapi::Resource>::Scope> =
                ::std::marker::PhantomData::<#scope>;
        }
    });
    quote! {
        #![doc = #doc]
        pub use ::k8s_openapi::api::#module::#version::{#(#kinds),*};
        #(#lists)*
        #(#scope_checks)*
    }
}
