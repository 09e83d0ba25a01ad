//! The layout every generated crate shares: `src/lib.rs` with one `#[rustfmt::skip]` module per API
//! group, `src/<module>.rs` per group, `src/<module>/<version>.rs` per group version, and the
//! crate's `Cargo.toml`.

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::quote;

use super::ctx::{EmitCtx, GroupVersionKey, inner_doc_attrs};
use super::manifest;
use crate::Error;
use crate::generated::Files;

/// Writes the module tree of one generated crate: `lib.rs` (crate docs + one skipped module per
/// group), `<module>.rs` per group, `<module>/<version>.rs` per group version from `bodies`.
///
/// `roots` are crate-root modules (the `Clientset` struct, the factory, the fake): each is written
/// to `src/<name>.rs`, so `lib.rs` stays trivially formatted (rustfmt formats `lib.rs` itself;
/// every other generated file sits under `#[rustfmt::skip]`).
pub(crate) fn module_tree(
    ctx: &EmitCtx<'_>,
    part: &str,
    crate_doc: &str,
    roots: Vec<RootModule>,
    bodies: Vec<(GroupVersionKey, String, TokenStream)>,
    files: &mut Files,
) -> Result<(), Error> {
    let src = ctx.crate_dir(part).join("src");
    let mut groups: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
    for ((module, version), source, body) in bodies {
        let path = src.join(&module).join(format!("{version}.rs"));
        files.insert(path, ctx.rust_file(&source, body)?);
        let entry = groups.entry(module).or_insert_with(|| (source, Vec::new()));
        entry.1.push(version);
    }
    let input = ctx.config.input.display().to_string();
    let mut mods = Vec::new();
    for (module, (_, versions)) in &groups {
        let ident = crate::names::ident(module);
        let version_idents = versions.iter().map(|v| crate::names::ident(v));
        let doc = format!(" API group module `{module}`: one submodule per version.");
        let tokens = quote! {
            #![doc = #doc]
            #(pub mod #version_idents;)*
        };
        files.insert(
            src.join(format!("{module}.rs")),
            ctx.rust_file(&input, tokens)?,
        );
        let doc = format!(" The `{module}` API group.");
        mods.push(quote! {
            #[doc = #doc]
            #[rustfmt::skip]
            pub mod #ident;
        });
    }
    let mut extra_lib = TokenStream::new();
    for root in roots {
        files.insert(
            src.join(format!("{}.rs", root.name)),
            ctx.rust_file(&input, root.tokens)?,
        );
        let module = crate::names::ident(root.name);
        let cfg = root
            .feature
            .map(|feature| quote!(#[cfg(feature = #feature)]));
        extra_lib.extend(match root.reexport {
            Some(item) => {
                let item = crate::names::ident(item);
                quote! {
                    #[rustfmt::skip]
                    mod #module;
                    pub use #module::#item;
                }
            }
            None => {
                let doc = format!(" {}", root.doc);
                quote! {
                    #[doc = #doc]
                    #cfg
                    #[rustfmt::skip]
                    pub mod #module;
                }
            }
        });
    }
    let doc_lines: Vec<String> = crate_doc
        .split('\n')
        .map(|line| line.trim().to_owned())
        .collect();
    let crate_docs = inner_doc_attrs(&doc_lines);
    let lib = quote! {
        #crate_docs
        #(#mods)*
        #extra_lib
    };
    files.insert(src.join("lib.rs"), ctx.rust_file(&input, lib)?);
    files.insert(
        ctx.crate_dir(part).join("Cargo.toml"),
        manifest::cargo_toml(ctx, part),
    );
    Ok(())
}

/// A module at the crate root of a generated crate, outside the group tree.
pub(crate) struct RootModule {
    /// File and module name, e.g. `clientset`.
    pub(crate) name: &'static str,
    /// `Some(item)`: private module whose `item` is re-exported; `None`: a public module.
    pub(crate) reexport: Option<&'static str>,
    /// Doc line of a public module.
    pub(crate) doc: &'static str,
    /// Cargo feature gating a public module.
    pub(crate) feature: Option<&'static str>,
    /// The module's content.
    pub(crate) tokens: TokenStream,
}
