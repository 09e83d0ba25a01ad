//! `kubegen_clientset::fake`: the generated fake clientset (client-gen's `fake/clientset.go`).
//!
//! All behaviour lives in the hand-written `kubegen_fake::FakeClient` (recorded actions,
//! reactors, an in-process API server whose watches replay by resourceVersion); the generated part
//! only lists the custom kinds to register, with their status subresource. Built-in kinds are
//! served by the in-process server itself. Behind the clientset crate's `fake` feature, so
//! production binaries do not link the test server.

use proc_macro2::TokenStream;
use quote::quote;

use super::ctx::EmitCtx;
use super::tree::RootModule;
use crate::names;

/// The `fake` root module of the clientset crate.
pub(super) fn root(ctx: &EmitCtx<'_>) -> RootModule {
    let api = ctx.config.crate_ident("api");
    let registrations = ctx
        .model
        .packages
        .iter()
        .flat_map(|p| &p.kinds)
        .map(|kind| {
            let (module, version, ty) = (
                names::ident(&kind.module),
                names::ident(&kind.version),
                names::ident(&kind.name),
            );
            let status = if kind.has_status {
                quote!(::kubegen_fake::StatusSubresource::Enabled)
            } else {
                quote!(::kubegen_fake::StatusSubresource::Disabled)
            };
            quote!(fake.register::<::#api::#module::#version::#ty>(#status);)
        });
    let tokens: TokenStream = quote! {
        #![doc = " A fake clientset for unit tests: the real typed clients over `kubegen_fake::FakeClient`."]
        #![doc = ""]
        #![doc = " Mirrors client-go's generated `fake.NewSimpleClientset`. Every request is recorded"]
        #![doc = " (`actions()`), reactors may answer first (`fake().prepend_reactor(..)`), and everything"]
        #![doc = " else is served by an in-process API server, so watches replay from a resourceVersion"]
        #![doc = " and no event between a List and a Watch is lost."]

        /// A [`Clientset`](crate::Clientset) whose requests go to an in-process fake API server.
        ///
        /// Derefs to the real `Clientset`, so tests call exactly what production code calls.
        #[derive(Clone)]
        pub struct Clientset {
            fake: ::kubegen_fake::FakeClient,
            clientset: crate::Clientset,
        }

        impl Clientset {
            /// A fake serving every generated kind, seeded with `objects` (each with `apiVersion`,
            /// `kind` and `metadata.name`; pass `serde_json::Value`s to mix kinds).
            ///
            /// # Errors
            /// An object cannot be seeded (see `kubegen_fake::FakeClient::seed`).
            pub fn new<T: ::serde::Serialize>(objects: impl IntoIterator<Item = T>) -> ::kubegen_fake::Result<Self> {
                let fake = ::kubegen_fake::FakeClient::new();
                #(#registrations)*
                fake.seed(objects)?;
                let clientset = crate::Clientset::new(fake.client());
                Ok(Clientset { fake, clientset })
            }

            /// The fake machinery: `actions()`, `clear_actions()`, `prepend_reactor(..)`, the server.
            pub fn fake(&self) -> &::kubegen_fake::FakeClient {
                &self.fake
            }

            /// Every request made so far, in order.
            pub fn actions(&self) -> ::std::vec::Vec<::kubegen_fake::Action> {
                self.fake.actions()
            }
        }

        impl ::std::ops::Deref for Clientset {
            type Target = crate::Clientset;

            fn deref(&self) -> &crate::Clientset {
                &self.clientset
            }
        }
    };
    RootModule {
        name: "fake",
        reexport: None,
        doc: "The generated fake clientset for tests (feature `fake`).",
        feature: Some("fake"),
        tokens,
    }
}
