//! The clientset crate: `Clientset` -> group-version clients -> typed clients per kind.
//!
//! Mirrors client-gen's output (`kubernetes/clientset.go`, `typed/<group>/<version>/<kind>.go`).
//! Every typed method is a doc comment with its HTTP route plus one call into
//! `kubegen_client::ResourceClient<K>`, where the verb is implemented once.

use proc_macro2::TokenStream;
use quote::quote;

use super::ctx::{EmitCtx, GroupVersion, GroupVersionKey};
use crate::Error;
use crate::generated::Files;
use crate::model::{CustomMethod, Kind, Scope, Verb};
use crate::names;

/// Emits `crates/generated/clientset` (the fake module is added by `fake.rs`).
pub(super) fn emit(ctx: &EmitCtx<'_>, files: &mut Files) -> Result<(), Error> {
    let api = ctx.config.crate_ident("api");
    let configs = ctx.config.crate_ident("applyconfigurations");
    let gvs = ctx.group_versions();
    let bodies: Vec<(GroupVersionKey, String, TokenStream)> = gvs
        .iter()
        .filter(|gv| !gv.kinds.is_empty())
        .map(|gv| {
            (
                (gv.module.to_owned(), gv.version.to_owned()),
                gv.source.clone(),
                group_version(gv, &api, &configs),
            )
        })
        .collect();
    let accessors = gvs.iter().filter(|gv| !gv.kinds.is_empty()).map(|gv| {
        let (method, ty) = (
            names::group_version(gv.module, gv.version),
            group_client(gv),
        );
        let (module, version) = (names::ident(gv.module), names::ident(gv.version));
        let doc = format!(" Clients for the kinds of `{}`.", api_version(gv));
        quote! {
            #[doc = #doc]
            pub fn #method(&self) -> crate::#module::#version::#ty {
                crate::#module::#version::#ty::new(self.client.clone())
            }
        }
    });
    let lib = quote! {
        #![doc = " The crate's root type."]
        /// Typed clients for every generated API group version, over one shared [`kubegen_client::Client`].
        ///
        /// Mirrors client-go's `kubernetes.Clientset`. Cheap to clone; clones share the connection.
        #[derive(Clone, Debug)]
        pub struct Clientset {
            client: ::kubegen_client::Client,
        }

        impl Clientset {
            /// A clientset over `client` (real HTTP, or any `Transport` such as the fake's).
            pub fn new(client: ::kubegen_client::Client) -> Self {
                Clientset { client }
            }

            /// The underlying client, for requests no generated method covers.
            pub fn client(&self) -> &::kubegen_client::Client {
                &self.client
            }

            #(#accessors)*
        }
    };
    let doc = " Typed clientset: `Clientset::new(client).police_v1beta1().white_lists(\"ns\").get(..)`.\n\n \
Generated from `apis/` by kubegen; every method delegates to `kubegen_client::ResourceClient`.";
    super::tree::module_tree(
        ctx,
        "clientset",
        doc,
        vec![
            super::tree::RootModule {
                name: "clientset",
                reexport: Some("Clientset"),
                doc: "",
                feature: None,
                tokens: lib,
            },
            super::fake::root(ctx),
        ],
        bodies,
        files,
    )
}

fn api_version(gv: &GroupVersion<'_>) -> String {
    if gv.group.is_empty() {
        gv.version.to_owned()
    } else {
        format!("{}/{}", gv.group, gv.version)
    }
}

fn group_client(gv: &GroupVersion<'_>) -> proc_macro2::Ident {
    names::group_type(gv.module, gv.version, "Client")
}

/// `<module>/<version>.rs`: the group-version client and one typed client per kind.
fn group_version(
    gv: &GroupVersion<'_>,
    api: &proc_macro2::Ident,
    configs: &proc_macro2::Ident,
) -> TokenStream {
    let ty = group_client(gv);
    let doc = format!(" Typed clients for `{}`.", api_version(gv));
    let struct_doc = format!(
        " Entry point to the kinds of `{}`; from `Clientset::{}()`.",
        api_version(gv),
        names::group_version(gv.module, gv.version)
    );
    let accessors = gv.kinds.iter().map(|kind| kind_accessors(kind));
    let clients = gv.kinds.iter().map(|kind| typed_client(kind, api, configs));
    quote! {
        #![doc = #doc]
        #[doc = #struct_doc]
        #[derive(Clone, Debug)]
        pub struct #ty {
            client: ::kubegen_client::Client,
        }

        impl #ty {
            /// A group-version client over `client`.
            pub fn new(client: ::kubegen_client::Client) -> Self {
                #ty { client }
            }

            #(#accessors)*
        }

        #(#clients)*
    }
}

fn kind_accessors(kind: &Kind) -> TokenStream {
    let names = names::for_kind(kind);
    let (accessor, client) = (&names.accessor, &names.client);
    match kind.scope {
        Scope::Namespaced => {
            let all = names::ident(&format!("{}_all_namespaces", names.accessor));
            let doc = format!(" `{}` objects in `namespace`.", kind.name);
            let all_doc = format!(
                " `{}` objects across all namespaces: for `list` and `watch` (the server rejects writes without a namespace).",
                kind.name
            );
            quote! {
                #[doc = #doc]
                pub fn #accessor(&self, namespace: &str) -> #client {
                    #client { inner: ::kubegen_client::ResourceClient::namespaced(self.client.clone(), namespace) }
                }
                #[doc = #all_doc]
                pub fn #all(&self) -> #client {
                    #client { inner: ::kubegen_client::ResourceClient::all_namespaces(self.client.clone()) }
                }
            }
        }
        Scope::Cluster => {
            let doc = format!(" `{}` objects (cluster-scoped).", kind.name);
            quote! {
                #[doc = #doc]
                pub fn #accessor(&self) -> #client {
                    #client { inner: ::kubegen_client::ResourceClient::cluster(self.client.clone()) }
                }
            }
        }
    }
}

/// The typed client of one kind, one method per enabled verb (see the STYLE.md exemplar).
fn typed_client(
    kind: &Kind,
    api: &proc_macro2::Ident,
    configs: &proc_macro2::Ident,
) -> TokenStream {
    let names = names::for_kind(kind);
    let (client, ty) = (&names.client, &names.ty);
    let (module, version) = (names::ident(&kind.module), names::ident(&kind.version));
    let path = quote!(::#api::#module::#version::#ty);
    let doc = format!(
        " Typed client for `{}` at `{}`.",
        kind.name,
        kind.collection_path()
    );
    let methods = kind
        .verbs
        .iter()
        .map(|verb| verb_method(kind, *verb, &path));
    let custom = kind
        .methods
        .iter()
        .map(|method| custom_method(kind, method, api));
    let config = crate::emit::applyconfig::config_type::config_ident(&kind.name);
    let apply = apply_methods(kind, &path, &quote!(::#configs::#module::#version::#config));
    quote! {
        #[doc = #doc]
        #[derive(Clone, Debug)]
        pub struct #client {
            inner: ::kubegen_client::ResourceClient<#path>,
        }

        impl #client {
            /// The generic client this facade delegates to.
            pub fn resource_client(&self) -> &::kubegen_client::ResourceClient<#path> {
                &self.inner
            }

            #(#methods)*
            #apply
            #(#custom)*
        }
    }
}

/// `apply` (with `patch`) and `apply_status` (with the status subresource): server-side apply of
/// the kind's apply configuration, which sends only the fields it sets.
fn apply_methods(kind: &Kind, ty: &TokenStream, config: &TokenStream) -> TokenStream {
    if !kind.has(Verb::Patch) {
        return TokenStream::new();
    }
    let item = format!("{}/{{name}}", kind.collection_path());
    let doc = [
        format!(
            " Server-side apply of `config` to the `{}` named `name` as `opts.field_manager`: \
creates it, or merges the fields `config` sets and releases those this manager applied before \
and no longer sets. A field another manager owns with another value is a 409 conflict unless \
`opts.force`.",
            kind.name
        ),
        String::new(),
        format!(" `PATCH {item}` (`application/apply-patch+yaml`)"),
    ];
    let status = (kind.has_status && kind.has(Verb::UpdateStatus)).then(|| {
        let doc = [
            format!(
                " Server-side apply of `config` to the status of the `{}` named `name`.",
                kind.name
            ),
            String::new(),
            format!(" `PATCH {item}/status` (`application/apply-patch+yaml`)"),
        ];
        quote! {
            #(#[doc = #doc])*
            pub async fn apply_status(&self, name: &str, config: &#config, opts: &::kubegen_client::ApplyOptions) -> ::kubegen_client::Result<#ty> {
                self.inner.apply_status(name, config, opts).await
            }
        }
    });
    quote! {
        #(#[doc = #doc])*
        pub async fn apply(&self, name: &str, config: &#config, opts: &::kubegen_client::ApplyOptions) -> ::kubegen_client::Result<#ty> {
            self.inner.apply(name, config, opts).await
        }
        #status
    }
}

/// The summary line and HTTP route of a standard verb's doc comment.
fn verb_doc(kind: &Kind, verb: Verb) -> (String, String) {
    let collection = kind.collection_path();
    let item = format!("{collection}/{{name}}");
    let kind_name = &kind.name;
    match verb {
        Verb::Get => (
            format!("Returns the `{kind_name}` named `name`."),
            format!("GET {item}"),
        ),
        Verb::List => (
            format!(
                "Lists `{kind_name}` objects (streaming decode, one page per call with `limit`)."
            ),
            format!("GET {collection}"),
        ),
        Verb::Watch => (
            format!("Watches `{kind_name}` objects from `opts.resource_version`."),
            format!("GET {collection}?watch=true"),
        ),
        Verb::Create => (
            format!("Creates a `{kind_name}`."),
            format!("POST {collection}"),
        ),
        Verb::Update => (
            if kind.has_status {
                format!(
                    "Replaces the `{kind_name}` named by `obj.metadata.name`; its status is ignored (see `update_status`)."
                )
            } else {
                format!("Replaces the `{kind_name}` named by `obj.metadata.name`.")
            },
            format!("PUT {item}"),
        ),
        Verb::UpdateStatus => (
            format!("Replaces the status of the `{kind_name}` named by `obj.metadata.name`."),
            format!("PUT {item}/status"),
        ),
        Verb::Patch => (
            format!("Patches the `{kind_name}` named `name`."),
            format!("PATCH {item}"),
        ),
        Verb::Delete => (
            format!("Deletes the `{kind_name}` named `name`."),
            format!("DELETE {item}"),
        ),
        Verb::DeleteCollection => (
            format!("Deletes the `{kind_name}` objects matching `list`."),
            format!("DELETE {collection}"),
        ),
    }
}

fn verb_method(kind: &Kind, verb: Verb, ty: &TokenStream) -> TokenStream {
    let (summary, route) = verb_doc(kind, verb);
    let doc = [format!(" {summary}"), String::new(), format!(" `{route}`")];
    let body = match verb {
        Verb::Get => quote! {
            pub async fn get(&self, name: &str, opts: &::kubegen_client::GetOptions) -> ::kubegen_client::Result<#ty> {
                self.inner.get(name, opts).await
            }
        },
        Verb::List => quote! {
            pub async fn list(&self, opts: &::kubegen_client::ListOptions) -> ::kubegen_client::Result<::kube_core::ObjectList<#ty>> {
                self.inner.list(opts).await
            }
        },
        Verb::Watch => quote! {
            pub async fn watch(&self, opts: &::kubegen_client::ListOptions) -> ::kubegen_client::Result<::kubegen_client::WatchStream<#ty>> {
                self.inner.watch(opts).await
            }
        },
        Verb::Create => quote! {
            pub async fn create(&self, obj: &#ty, opts: &::kubegen_client::CreateOptions) -> ::kubegen_client::Result<#ty> {
                self.inner.create(obj, opts).await
            }
        },
        Verb::Update => quote! {
            pub async fn update(&self, obj: &#ty, opts: &::kubegen_client::UpdateOptions) -> ::kubegen_client::Result<#ty> {
                self.inner.update(obj, opts).await
            }
        },
        Verb::UpdateStatus => return status_methods(kind, ty),
        Verb::Patch => quote! {
            pub async fn patch(&self, name: &str, patch: &::kubegen_client::Patch, opts: &::kubegen_client::PatchOptions) -> ::kubegen_client::Result<#ty> {
                self.inner.patch(name, patch, opts).await
            }
        },
        Verb::Delete => quote! {
            pub async fn delete(&self, name: &str, opts: &::kubegen_client::DeleteOptions) -> ::kubegen_client::Result<()> {
                self.inner.delete(name, opts).await
            }
        },
        Verb::DeleteCollection => quote! {
            pub async fn delete_collection(&self, delete: &::kubegen_client::DeleteOptions, list: &::kubegen_client::ListOptions) -> ::kubegen_client::Result<()> {
                self.inner.delete_collection(delete, list).await
            }
        },
    };
    quote! {
        #(#[doc = #doc])*
        #body
    }
}

/// `update_status` and `patch_status`: both exist exactly when the status subresource does.
fn status_methods(kind: &Kind, ty: &TokenStream) -> TokenStream {
    let item = format!("{}/{{name}}/status", kind.collection_path());
    let update_doc = [
        format!(
            " Replaces the status of the `{}` named by `obj.metadata.name`; its spec is ignored.",
            kind.name
        ),
        String::new(),
        format!(" `PUT {item}`"),
    ];
    let patch_doc = [
        format!(" Patches the status of the `{}` named `name`.", kind.name),
        String::new(),
        format!(" `PATCH {item}`"),
    ];
    quote! {
        #(#[doc = #update_doc])*
        pub async fn update_status(&self, obj: &#ty, opts: &::kubegen_client::UpdateOptions) -> ::kubegen_client::Result<#ty> {
            self.inner.update_status(obj, opts).await
        }
        #(#[doc = #patch_doc])*
        pub async fn patch_status(&self, name: &str, patch: &::kubegen_client::Patch, opts: &::kubegen_client::PatchOptions) -> ::kubegen_client::Result<#ty> {
            self.inner.patch_status(name, patch, opts).await
        }
    }
}

/// A `+genclient:method=` extension: one call to the generic subresource verbs.
fn custom_method(kind: &Kind, method: &CustomMethod, api: &proc_macro2::Ident) -> TokenStream {
    let name = names::ident(&names::snake(&method.name));
    let sub = method.subresource.clone().unwrap_or_default();
    let type_path = |ty: &Option<String>| match ty {
        Some(path) if path.starts_with("k8s_openapi::") => {
            let path: TokenStream = path.parse().unwrap_or_default();
            quote!(::#path)
        }
        Some(local) => {
            let (module, version, ty) = (
                names::ident(&kind.module),
                names::ident(&kind.version),
                names::ident(local),
            );
            quote!(::#api::#module::#version::#ty)
        }
        None => {
            let (module, version, ty) = (
                names::ident(&kind.module),
                names::ident(&kind.version),
                names::ident(&kind.name),
            );
            quote!(::#api::#module::#version::#ty)
        }
    };
    let (input, result) = (type_path(&method.input), type_path(&method.result));
    let http = match method.verb {
        Verb::Create => "POST",
        Verb::Update => "PUT",
        Verb::Patch => "PATCH",
        _ => "GET",
    };
    let doc = [
        format!(
            " `{}` custom method on the `{sub}` subresource of the `{}` named `name`.",
            method.name, kind.name
        ),
        String::new(),
        format!(" `{http} {}/{{name}}/{sub}`", kind.collection_path()),
    ];
    let body = match method.verb {
        Verb::Create => quote! {
            pub async fn #name(&self, name: &str, body: &#input, opts: &::kubegen_client::CreateOptions) -> ::kubegen_client::Result<#result> {
                self.inner.create_subresource(name, #sub, body, opts).await
            }
        },
        Verb::Update => quote! {
            pub async fn #name(&self, name: &str, body: &#input, opts: &::kubegen_client::UpdateOptions) -> ::kubegen_client::Result<#result> {
                self.inner.update_subresource(name, #sub, body, opts).await
            }
        },
        Verb::Patch => quote! {
            pub async fn #name(&self, name: &str, patch: &::kubegen_client::Patch, opts: &::kubegen_client::PatchOptions) -> ::kubegen_client::Result<#result> {
                self.inner.patch_subresource(name, #sub, patch, opts).await
            }
        },
        _ => quote! {
            pub async fn #name(&self, name: &str) -> ::kubegen_client::Result<#result> {
                self.inner.get_subresource(name, #sub).await
            }
        },
    };
    quote! {
        #(#[doc = #doc])*
        #body
    }
}
