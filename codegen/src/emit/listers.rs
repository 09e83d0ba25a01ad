//! The listers crate: typed read access to informer caches.
//!
//! Mirrors lister-gen's output (`listers/<group>/<version>/<kind>.go`): `WhiteListLister` and
//! `WhiteListNamespaceLister`, each a thin wrapper of `kubegen_cache::Lister<K>` /
//! `NamespaceLister<K>`. As in client-go, only kinds with both `list` and `get` get a lister.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::ctx::{EmitCtx, GroupVersion, GroupVersionKey};
use crate::Error;
use crate::generated::Files;
use crate::model::{Kind, Scope, Verb};
use crate::names;

/// Whether `kind` gets a lister (client-go: list and get).
pub(super) fn has_lister(kind: &Kind) -> bool {
    kind.has(Verb::List) && kind.has(Verb::Get)
}

/// Emits `crates/generated/listers`.
pub(super) fn emit(ctx: &EmitCtx<'_>, files: &mut Files) -> Result<(), Error> {
    let api = ctx.config.crate_ident("api");
    let bodies: Vec<(GroupVersionKey, String, TokenStream)> = ctx
        .group_versions()
        .iter()
        .filter(|gv| gv.kinds.iter().any(|kind| has_lister(kind)))
        .map(|gv| {
            (
                (gv.module.to_owned(), gv.version.to_owned()),
                gv.source.clone(),
                group_version(gv, &api),
            )
        })
        .collect();
    let doc = " Typed listers: read objects from an informer's local cache.\n\n \
Generated from `apis/` by kubegen; every method delegates to `kubegen_cache::Lister`. \
Get one from the informers crate: `factory.police_v1beta1().white_lists().lister()`.";
    super::tree::module_tree(ctx, "listers", doc, Vec::new(), bodies, files)
}

fn group_version(gv: &GroupVersion<'_>, api: &Ident) -> TokenStream {
    let doc = format!(
        " Listers for the kinds of `{}`.",
        gv.kinds
            .first()
            .map(|k| k.api_version())
            .unwrap_or_default()
    );
    let listers = gv
        .kinds
        .iter()
        .filter(|kind| has_lister(kind))
        .map(|kind| lister(kind, api));
    quote! {
        #![doc = #doc]
        #(#listers)*
    }
}

fn lister(kind: &Kind, api: &Ident) -> TokenStream {
    let names = names::for_kind(kind);
    let (lister, ns_lister, accessor) = (&names.lister, &names.namespace_lister, &names.accessor);
    let (module, version, ty) = (
        names::ident(&kind.module),
        names::ident(&kind.version),
        &names.ty,
    );
    let path = quote!(::#api::#module::#version::#ty);
    let doc = format!(
        " Reads `{}` objects from an informer's cache (no API server round trip).",
        kind.name
    );
    let (methods, extra) = match kind.scope {
        Scope::Namespaced => {
            let accessor_doc = format!(" The cached `{}` objects of `namespace`.", kind.name);
            let ns_doc = format!(
                " Reads the cached `{}` objects of one namespace.",
                kind.name
            );
            let method = quote! {
                #[doc = #accessor_doc]
                pub fn #accessor(&self, namespace: &str) -> #ns_lister {
                    #ns_lister { inner: self.inner.namespaced(namespace) }
                }
            };
            (method, namespace_lister(ns_lister, &path, &ns_doc))
        }
        Scope::Cluster => {
            let get_doc = format!(" The cached `{}` named `name`.", kind.name);
            let method = quote! {
                #[doc = #get_doc]
                pub fn get(&self, name: &str) -> ::std::option::Option<::std::sync::Arc<#path>> {
                    self.inner.get(None, name)
                }
            };
            (method, TokenStream::new())
        }
    };
    quote! {
        #[doc = #doc]
        #[derive(Clone)]
        pub struct #lister {
            inner: ::kubegen_cache::Lister<#path>,
        }

        impl #lister {
            /// A typed lister over the generic cache lister.
            pub fn new(inner: ::kubegen_cache::Lister<#path>) -> Self {
                #lister { inner }
            }

            /// Cached objects whose labels match `selector` (`&Selector::default()` matches all).
            pub fn list(&self, selector: &::kube_core::Selector) -> ::std::vec::Vec<::std::sync::Arc<#path>> {
                self.inner.list(selector)
            }

            /// The cached object with key `key` (`namespace/name`, or `name` when cluster-scoped), as a work queue holds it.
            pub fn get_by_key(&self, key: &str) -> ::std::option::Option<::std::sync::Arc<#path>> {
                self.inner.get_by_key(key)
            }

            /// The generic lister this facade delegates to (for `by_index`).
            pub fn generic(&self) -> &::kubegen_cache::Lister<#path> {
                &self.inner
            }

            #methods
        }

        #extra
    }
}

fn namespace_lister(ns_lister: &Ident, path: &TokenStream, doc: &str) -> TokenStream {
    quote! {
        #[doc = #doc]
        pub struct #ns_lister {
            inner: ::kubegen_cache::NamespaceLister<#path>,
        }

        impl #ns_lister {
            /// Cached objects of this namespace whose labels match `selector`.
            pub fn list(&self, selector: &::kube_core::Selector) -> ::std::vec::Vec<::std::sync::Arc<#path>> {
                self.inner.list(selector)
            }

            /// The cached object `name` of this namespace.
            pub fn get(&self, name: &str) -> ::std::option::Option<::std::sync::Arc<#path>> {
                self.inner.get(name)
            }
        }
    }
}
