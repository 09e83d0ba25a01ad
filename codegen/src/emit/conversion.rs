//! Conversions between the versions of a kind, emitted into the api crate's non-storage
//! ("spoke") version modules: controller-runtime's hub and spoke, with the storage version
//! (`+kubegen:storageversion`) as the hub, as conversion-gen fills in `Convert_v1_X_To_v2_X` for
//! every field that matches and leaves `// WARNING: in.Foo requires manual conversion` for the rest.
//!
//! # What is generated
//! For each spoke version of a multi-version kind, `<Kind>::into_hub::<C>(self)` and
//! `<Kind>::from_hub::<C>(hub)`, and beneath them one private function per direction for every
//! struct and enum reached from the kind. A field is carried over when the other version has a
//! field of the same name and type, recursively through structs and enums of the same name
//! (an enum matches when its variants are the same), inside `Option`, `Vec` and maps.
//!
//! # The fields a person must convert: a trait, `<spoke>::Conversion`
//! Every other field of the *target* struct gets a required method of the spoke module's
//! `Conversion` trait, named `<target version>_<struct>_<field>`, that computes it from the whole
//! source struct. The user implements the trait on a type of theirs and passes that type as `C`;
//! until every method exists rustc stops with E0046 "not all trait items implemented, missing:
//! `v1alpha1_virtual_machine_spec_memory`, ...", which names each field to convert by hand. Why
//! a trait rather than calls to functions the user must write: the generated crate cannot call
//! into the user's crate, while a trait is the one way Rust lets generated code demand code from
//! its user, and its method list doubles as the to-do list, with a doc comment per field. Methods
//! take no `self`, so the conversions are plain `fn` items the runtime can hold.
//!
//! The JSON side (decoding by `apiVersion`, encoding in the desired one, checking metadata) is
//! written once in kubegen-runtime's `HubConversion`; the code here only names fields.

use std::collections::BTreeSet;

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use crate::model::{Field, FieldType, Kind, Model, Package, StructDef, UNKNOWN_FIELDS};
use crate::names;

/// How a value of one version becomes the other version's value of the same field.
#[derive(Clone, Debug, PartialEq)]
enum Conv {
    /// Moved as it is (same type, nothing of the package inside).
    Same,
    /// Through the generated function of the struct of this name.
    Struct(String),
    /// Through the generated function of the enum of this name.
    Enum(String),
    /// Each value inside an `Option`.
    Option(Box<Conv>),
    /// Each item of a `Vec`.
    Vec(Box<Conv>),
    /// Each value of a map.
    Map(Box<Conv>),
}

/// One direction of a spoke's conversions.
struct Direction<'a> {
    /// The package values come from.
    source: &'a Package,
    /// The package values go to.
    target: &'a Package,
    /// `into_hub` or `from_hub`: the suffix of the generated functions.
    suffix: &'static str,
    /// Whether the source is this (the spoke's) module; the other side is `super::<hub>`.
    source_is_local: bool,
}

/// The conversion code of `spoke`'s multi-version kinds, or nothing when it holds none.
pub(super) fn spoke_tokens(model: &Model, spoke: &Package) -> TokenStream {
    let pairs: Vec<(&Kind, &Package)> = spoke
        .kinds
        .iter()
        .filter(|kind| !kind.storage_version)
        .filter_map(|kind| hub_of(model, kind).map(|hub| (kind, hub)))
        .collect();
    if pairs.is_empty() {
        return TokenStream::new();
    }
    let mut methods = Vec::new();
    let mut functions = Vec::new();
    let mut kinds = Vec::new();
    // Two kinds may share a struct: one function per struct and direction.
    let mut seen = BTreeSet::new();
    for (kind, hub) in &pairs {
        let (mut reached_structs, mut reached_enums) = reached(spoke, hub, &kind.name);
        reached_structs.retain(|name| seen.insert(name.clone()));
        reached_enums.retain(|name| seen.insert(name.clone()));
        for (source, target, suffix, source_is_local) in [
            (spoke, *hub, "into_hub", true),
            (*hub, spoke, "from_hub", false),
        ] {
            let direction = Direction {
                source,
                target,
                suffix,
                source_is_local,
            };
            for name in &reached_structs {
                functions.push(struct_fn(&direction, name, &mut methods));
            }
            for name in &reached_enums {
                functions.push(enum_fn(&direction, name));
            }
        }
        kinds.push(kind_impl(kind, hub));
    }
    let doc = format!(
        " The fields of `{group}/{version}` that have no field of the same name and type in \
         their kind's storage version, or the reverse: one method per field, named \
         `<version of the field>_<struct>_<field>`, computing it from the other version's whole \
         struct. Implement it on a type of yours and pass that type to `into_hub`/`from_hub` \
         (kubegen-runtime's `HubConversion` serves them to the API server).",
        group = spoke.group,
        version = spoke.version
    );
    quote! {
        #[doc = #doc]
        pub trait Conversion {
            #(#methods)*
        }
        #(#kinds)*
        #(#functions)*
    }
}

/// The storage-version package of `kind`'s group and plural, when `kind` is not in it.
fn hub_of<'a>(model: &'a Model, kind: &Kind) -> Option<&'a Package> {
    model.packages.iter().find(|package| {
        package.group == kind.group
            && package.version != kind.version
            && package
                .kinds
                .iter()
                .any(|other| other.plural == kind.plural && other.storage_version)
    })
}

/// The structs and enums reached from `kind` through fields that match, in both versions.
fn reached(spoke: &Package, hub: &Package, kind: &str) -> (Vec<String>, Vec<String>) {
    let mut structs = vec![kind.to_owned()];
    let mut enums = BTreeSet::new();
    let mut next = 0;
    while let Some(name) = structs.get(next).cloned() {
        next += 1;
        let (Some(a), Some(b)) = (find(spoke, &name), find(hub, &name)) else {
            continue;
        };
        for field in &a.fields {
            let Some(other) = b.fields.iter().find(|f| f.name == field.name) else {
                continue;
            };
            let Some(conv) = matching(spoke, hub, &field.ty, &other.ty) else {
                continue;
            };
            for (name, is_struct) in named_in(&conv) {
                if is_struct && !structs.contains(&name) {
                    structs.push(name);
                } else if !is_struct {
                    enums.insert(name);
                }
            }
        }
    }
    (structs, enums.into_iter().collect())
}

fn find<'a>(package: &'a Package, name: &str) -> Option<&'a StructDef> {
    package.structs.iter().find(|def| def.name == name)
}

/// How a value of type `a` (in `pa`) becomes a value of type `b` (in `pb`), if it can without
/// a person: same shape, package types of the same name (enums with the same variants).
fn matching(pa: &Package, pb: &Package, a: &FieldType, b: &FieldType) -> Option<Conv> {
    let wrap = |inner: Conv, make: fn(Box<Conv>) -> Conv| {
        if inner == Conv::Same {
            Conv::Same
        } else {
            make(Box::new(inner))
        }
    };
    match (a, b) {
        (FieldType::Option(a), FieldType::Option(b)) => {
            Some(wrap(matching(pa, pb, a, b)?, Conv::Option))
        }
        (FieldType::Vec(a), FieldType::Vec(b)) => Some(wrap(matching(pa, pb, a, b)?, Conv::Vec)),
        (FieldType::Map(a), FieldType::Map(b)) => Some(wrap(matching(pa, pb, a, b)?, Conv::Map)),
        (FieldType::Named(a), FieldType::Named(b)) if a == b => {
            if find(pa, a).is_some() && find(pb, a).is_some() {
                return Some(Conv::Struct(a.clone()));
            }
            let (ea, eb) = (
                pa.enums.iter().find(|e| e.name == *a)?,
                pb.enums.iter().find(|e| e.name == *a)?,
            );
            let variants = |def: &crate::model::EnumDef| {
                def.variants
                    .iter()
                    .map(|v| (v.name.clone(), v.value.clone()))
                    .collect::<BTreeSet<_>>()
            };
            (variants(ea) == variants(eb)).then(|| Conv::Enum(a.clone()))
        }
        (a, b) if a == b && !has_named(a) => Some(Conv::Same),
        _ => None,
    }
}

fn has_named(ty: &FieldType) -> bool {
    match ty {
        FieldType::Named(_) => true,
        FieldType::Option(inner) | FieldType::Vec(inner) | FieldType::Map(inner) => {
            has_named(inner)
        }
        _ => false,
    }
}

/// The package types a conversion goes through: `(name, is a struct)`.
fn named_in(conv: &Conv) -> Vec<(String, bool)> {
    match conv {
        Conv::Same => Vec::new(),
        Conv::Struct(name) => vec![(name.clone(), true)],
        Conv::Enum(name) => vec![(name.clone(), false)],
        Conv::Option(inner) | Conv::Vec(inner) | Conv::Map(inner) => named_in(inner),
    }
}

impl Direction<'_> {
    /// The path of a package type of the source or the target side, seen from the spoke module.
    fn path(&self, name: &str, source: bool) -> TokenStream {
        let ident = names::ident(name);
        if source == self.source_is_local {
            quote!(#ident)
        } else {
            let hub = names::ident(if self.source_is_local {
                &self.target.version
            } else {
                &self.source.version
            });
            quote!(super::#hub::#ident)
        }
    }

    /// A field type of the target side, package types qualified.
    fn target_type(&self, ty: &FieldType) -> TokenStream {
        match ty {
            FieldType::Named(name) => self.path(name, false),
            FieldType::Option(inner) => {
                let inner = self.target_type(inner);
                quote!(::std::option::Option<#inner>)
            }
            FieldType::Vec(inner) => {
                let inner = self.target_type(inner);
                quote!(::std::vec::Vec<#inner>)
            }
            FieldType::Map(inner) => {
                let inner = self.target_type(inner);
                quote!(::std::collections::BTreeMap<::std::string::String, #inner>)
            }
            other => names::rust_type(other),
        }
    }

    /// The generated function converting package type `name` in this direction.
    fn function(&self, name: &str) -> Ident {
        format_ident!("{}_{}", names::snake(name), self.suffix)
    }

    /// An expression of type `Result<T, String>` converting `value`.
    fn expr(&self, conv: &Conv, value: &TokenStream) -> TokenStream {
        match conv {
            Conv::Same => quote!(::std::result::Result::<_, ::std::string::String>::Ok(#value)),
            Conv::Struct(name) => {
                let function = self.function(name);
                quote!(#function::<C>(#value))
            }
            Conv::Enum(name) => {
                let function = self.function(name);
                quote!(#function(#value))
            }
            Conv::Option(inner) => {
                let callable = self.callable(inner);
                quote!(#value.map(#callable).transpose())
            }
            Conv::Vec(inner) => {
                let callable = self.callable(inner);
                quote!(#value.into_iter().map(#callable).collect::<::std::result::Result<::std::vec::Vec<_>, ::std::string::String>>())
            }
            Conv::Map(inner) => {
                let each = self.expr(inner, &quote!(v));
                quote!(#value.into_iter().map(|(k, v)| #each.map(|v| (k, v))).collect::<::std::result::Result<::std::collections::BTreeMap<_, _>, ::std::string::String>>())
            }
        }
    }

    /// Something to pass to `map`: a function path, or a closure.
    fn callable(&self, conv: &Conv) -> TokenStream {
        match conv {
            Conv::Struct(name) => {
                let function = self.function(name);
                quote!(#function::<C>)
            }
            Conv::Enum(name) => {
                let function = self.function(name);
                quote!(#function)
            }
            other => {
                let each = self.expr(other, &quote!(v));
                quote!(|v| #each)
            }
        }
    }
}

/// The trait method filling `field` of the target struct `def` from the whole source struct.
fn hand_method(direction: &Direction<'_>, def: &StructDef, field: &Field) -> TokenStream {
    let method = hand_method_name(&direction.target.version, &def.name, &field.name);
    let source = direction.path(&def.name, true);
    let ty = direction.target_type(&field.ty);
    let doc = format!(
        " `{target}` `{name}.{json}`: no field of the same name and type in `{source_version}`; \
         compute it from the `{source_version}` `{name}`.",
        target = direction.target.version,
        name = def.name,
        json = field.json_name,
        source_version = direction.source.version,
    );
    quote! {
        #[doc = #doc]
        fn #method(from: &#source) -> ::std::result::Result<#ty, ::std::string::String>;
    }
}

/// `<target version>_<struct>_<field>`: what rustc lists when the method is missing.
pub(crate) fn hand_method_name(version: &str, def: &str, field: &str) -> Ident {
    format_ident!("{}_{}_{}", version, names::snake(def), field)
}

/// The function converting struct `name` in `direction`; pushes the trait methods it needs.
fn struct_fn(direction: &Direction<'_>, name: &str, methods: &mut Vec<TokenStream>) -> TokenStream {
    let function = direction.function(name);
    let (source_ty, target_ty) = (direction.path(name, true), direction.path(name, false));
    let (Some(source), Some(target)) = (find(direction.source, name), find(direction.target, name))
    else {
        return TokenStream::new();
    };
    let mut hand = Vec::new();
    let mut fields = Vec::new();
    for field in &target.fields {
        let ident = names::ident(&field.name);
        let conv = source
            .fields
            .iter()
            .find(|f| f.name == field.name)
            .and_then(|f| matching(direction.source, direction.target, &f.ty, &field.ty));
        match conv {
            Some(Conv::Same) => fields.push(quote!(#ident: from.#ident)),
            Some(conv) => {
                let expr = direction.expr(&conv, &quote!(from.#ident));
                fields.push(quote!(#ident: #expr?));
            }
            None => {
                methods.push(hand_method(direction, target, field));
                let method = hand_method_name(&direction.target.version, name, &field.name);
                hand.push(quote!(let #ident = C::#method(&from)?;));
                fields.push(quote!(#ident));
            }
        }
    }
    if direction.target.keeps_unknown_fields(target) {
        let ident = names::ident(UNKNOWN_FIELDS);
        fields.push(if direction.source.keeps_unknown_fields(source) {
            quote!(#ident: from.#ident)
        } else {
            quote!(#ident: ::std::default::Default::default())
        });
    }
    // Every struct function takes `C`, used or not, so callers need not know which structs hold
    // hand-converted fields somewhere below them.
    quote! {
        #[allow(clippy::extra_unused_type_parameters)]
        fn #function<C: Conversion>(from: #source_ty) -> ::std::result::Result<#target_ty, ::std::string::String> {
            #(#hand)*
            ::std::result::Result::Ok(#target_ty { #(#fields),* })
        }
    }
}

/// The function converting enum `name` (same variants on both sides) in `direction`.
fn enum_fn(direction: &Direction<'_>, name: &str) -> TokenStream {
    let function = direction.function(name);
    let (source_ty, target_ty) = (direction.path(name, true), direction.path(name, false));
    let Some(def) = direction.source.enums.iter().find(|e| e.name == name) else {
        return TokenStream::new();
    };
    let arms = def.variants.iter().map(|variant| {
        let variant = names::ident(&variant.name);
        quote!(#source_ty::#variant => #target_ty::#variant)
    });
    quote! {
        fn #function(from: #source_ty) -> ::std::result::Result<#target_ty, ::std::string::String> {
            ::std::result::Result::Ok(match from { #(#arms),* })
        }
    }
}

/// `into_hub` and `from_hub` on the spoke kind.
fn kind_impl(kind: &Kind, hub: &Package) -> TokenStream {
    let ty = names::ident(&kind.name);
    let hub_version = names::ident(&hub.version);
    let into = format_ident!("{}_into_hub", names::snake(&kind.name));
    let from = format_ident!("{}_from_hub", names::snake(&kind.name));
    let into_doc = format!(
        " This `{}` in the storage version `{}`; the fields without a counterpart come from `C`.",
        kind.name, hub.version
    );
    let from_doc = format!(
        " A storage-version (`{}`) `{}` in this version; the fields without a counterpart come from `C`.",
        hub.version, kind.name
    );
    quote! {
        impl #ty {
            #[doc = #into_doc]
            ///
            /// # Errors
            /// What a method of `C` returned.
            pub fn into_hub<C: Conversion>(self) -> ::std::result::Result<super::#hub_version::#ty, ::std::string::String> {
                #into::<C>(self)
            }
            #[doc = #from_doc]
            ///
            /// # Errors
            /// What a method of `C` returned.
            pub fn from_hub<C: Conversion>(hub: super::#hub_version::#ty) -> ::std::result::Result<Self, ::std::string::String> {
                #from::<C>(hub)
            }
        }
    }
}

#[cfg(test)]
#[path = "conversion_tests.rs"]
mod tests;
