//! The informers crate: `SharedInformerFactory` -> group-version informers -> typed informers.
//!
//! Mirrors informer-gen's output (`informers/factory.go`, `informers/<group>/<version>/<kind>.go`).
//! The factory wraps `kubegen_cache::InformerFactory`, which owns the one-informer-per-type rule,
//! start/stop and the options (namespace, selectors, transform, resync); the generated part only
//! names the kinds. As in client-go, only kinds with both `list` and `watch` get an informer.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::ctx::{EmitCtx, GroupVersion, GroupVersionKey};
use crate::Error;
use crate::generated::Files;
use crate::model::{Kind, Verb};
use crate::names;

/// Whether `kind` gets an informer (client-go: list and watch; the lister also needs get).
fn has_informer(kind: &Kind) -> bool {
    kind.has(Verb::List) && kind.has(Verb::Watch) && super::listers::has_lister(kind)
}

/// Emits `crates/generated/informers`.
pub(super) fn emit(ctx: &EmitCtx<'_>, files: &mut Files) -> Result<(), Error> {
    let crates = Crates {
        api: ctx.config.crate_ident("api"),
        listers: ctx.config.crate_ident("listers"),
    };
    let gvs: Vec<GroupVersion<'_>> = ctx
        .group_versions()
        .into_iter()
        .filter(|gv| gv.kinds.iter().any(|kind| has_informer(kind)))
        .collect();
    let bodies: Vec<(GroupVersionKey, String, TokenStream)> = gvs
        .iter()
        .map(|gv| {
            (
                (gv.module.to_owned(), gv.version.to_owned()),
                gv.source.clone(),
                group_version(gv, &crates),
            )
        })
        .collect();
    let accessors = gvs.iter().map(|gv| {
        let method = names::group_version(gv.module, gv.version);
        let ty = names::group_type(gv.module, gv.version, "Informers");
        let (module, version) = (names::ident(gv.module), names::ident(gv.version));
        let doc = format!(" Informers for the kinds of `{}`.", api_version(gv));
        quote! {
            #[doc = #doc]
            pub fn #method(&self) -> crate::#module::#version::#ty {
                crate::#module::#version::#ty::new(self.inner.clone())
            }
        }
    });
    let lib = quote! {
        #![doc = " The crate's root type."]
        /// Shared informers for every generated kind, one per type, over one client.
        ///
        /// Mirrors client-go's `informers.SharedInformerFactory`. Request the informers you need
        /// (`factory.police_v1beta1().white_lists()`), then [`start`](Self::start): informers
        /// requested later are not started. Options (namespace, label/field selectors,
        /// transform, resync) live in `kubegen_cache::FactoryOptions`.
        #[derive(Clone)]
        pub struct SharedInformerFactory {
            inner: ::kubegen_cache::InformerFactory<::kubegen_cache::ClientListWatchSource>,
        }

        impl SharedInformerFactory {
            /// A factory over `client` with `options`.
            pub fn new(client: ::kubegen_client::Client, options: ::kubegen_cache::FactoryOptions) -> Self {
                let source = ::kubegen_cache::ClientListWatchSource::new(client);
                SharedInformerFactory { inner: ::kubegen_cache::InformerFactory::new(source, options) }
            }

            /// The generic factory this facade delegates to (start, sync, shutdown, any kind).
            pub fn generic(&self) -> &::kubegen_cache::InformerFactory<::kubegen_cache::ClientListWatchSource> {
                &self.inner
            }

            /// Starts every informer requested so far.
            pub fn start(&self) {
                self.inner.start()
            }

            /// Waits until every started informer has synced, or `timeout` passes.
            ///
            /// # Errors
            /// An informer did not sync in time, or was requested but never started.
            pub async fn wait_for_cache_sync(&self, timeout: ::std::time::Duration) -> ::std::result::Result<(), ::kubegen_cache::Error> {
                self.inner.wait_for_cache_sync(timeout).await
            }

            /// Stops every informer this factory started.
            pub async fn shutdown(&self) {
                self.inner.shutdown().await
            }

            #(#accessors)*
        }

        /// The typed facade over an existing generic factory, e.g. a `kubegen_runtime::Manager`'s,
        /// so several controllers share one list+watch per kind.
        impl ::std::convert::From<::kubegen_cache::InformerFactory<::kubegen_cache::ClientListWatchSource>> for SharedInformerFactory {
            fn from(inner: ::kubegen_cache::InformerFactory<::kubegen_cache::ClientListWatchSource>) -> Self {
                SharedInformerFactory { inner }
            }
        }
    };
    let doc = " Typed shared informers: `SharedInformerFactory::new(client, options).police_v1beta1().white_lists()`.\n\n \
Generated from `apis/` by kubegen; delegates to `kubegen_cache::InformerFactory` and `SharedIndexInformer`.";
    super::tree::module_tree(
        ctx,
        "informers",
        doc,
        vec![super::tree::RootModule {
            name: "factory",
            reexport: Some("SharedInformerFactory"),
            doc: "",
            feature: None,
            tokens: lib,
        }],
        bodies,
        files,
    )
}

/// Crate names the informers refer to.
struct Crates {
    api: Ident,
    listers: Ident,
}

fn api_version(gv: &GroupVersion<'_>) -> String {
    if gv.group.is_empty() {
        gv.version.to_owned()
    } else {
        format!("{}/{}", gv.group, gv.version)
    }
}

fn group_version(gv: &GroupVersion<'_>, crates: &Crates) -> TokenStream {
    let ty = names::group_type(gv.module, gv.version, "Informers");
    let doc = format!(" Informers for `{}`.", api_version(gv));
    let struct_doc = format!(
        " The informers of `{}`; from `SharedInformerFactory::{}()`.",
        api_version(gv),
        names::group_version(gv.module, gv.version)
    );
    let kinds: Vec<&&Kind> = gv.kinds.iter().filter(|kind| has_informer(kind)).collect();
    let accessors = kinds.iter().map(|kind| {
        let names = names::for_kind(kind);
        let (accessor, informer) = (&names.accessor, &names.informer);
        let doc = format!(
            " The shared informer of `{}` (created on first request).",
            kind.name
        );
        quote! {
            #[doc = #doc]
            pub fn #accessor(&self) -> #informer {
                #informer { inner: self.factory.informer() }
            }
        }
    });
    let informers = kinds.iter().map(|kind| typed_informer(kind, crates));
    quote! {
        #![doc = #doc]
        #[doc = #struct_doc]
        #[derive(Clone)]
        pub struct #ty {
            factory: ::kubegen_cache::InformerFactory<::kubegen_cache::ClientListWatchSource>,
        }

        impl #ty {
            /// The group-version informers of `factory`.
            pub fn new(factory: ::kubegen_cache::InformerFactory<::kubegen_cache::ClientListWatchSource>) -> Self {
                #ty { factory }
            }

            #(#accessors)*
        }

        #(#informers)*
    }
}

fn typed_informer(kind: &Kind, crates: &Crates) -> TokenStream {
    let names = names::for_kind(kind);
    let (informer, lister, ty) = (&names.informer, &names.lister, &names.ty);
    let (module, version) = (names::ident(&kind.module), names::ident(&kind.version));
    let (api, listers) = (&crates.api, &crates.listers);
    let path = quote!(::#api::#module::#version::#ty);
    let doc = format!(" The shared informer and lister of `{}`.", kind.name);
    quote! {
        #[doc = #doc]
        #[derive(Clone)]
        pub struct #informer {
            inner: ::kubegen_cache::SharedIndexInformer<#path>,
        }

        impl #informer {
            /// The shared informer: add event handlers, indexers; check `has_synced`.
            pub fn informer(&self) -> ::kubegen_cache::SharedIndexInformer<#path> {
                self.inner.clone()
            }

            /// A typed lister over this informer's cache.
            pub fn lister(&self) -> ::#listers::#module::#version::#lister {
                ::#listers::#module::#version::#lister::new(self.inner.lister())
            }
        }
    }
}
