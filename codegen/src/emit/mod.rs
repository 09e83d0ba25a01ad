//! Phase 3: model -> files. Pure functions: each emitter returns a `TokenStream` (or YAML text for
//! CRDs), this module formats it with prettyplease and puts the header on top.
//!
//! Generated crates share one layout: `src/lib.rs` declares one `#[rustfmt::skip]` module per API
//! group (`src/<module>.rs`), which declares one module per version (`src/<module>/<version>.rs`).
//! Mirrors code-generator's per-generator output packages, minus its string templates.

use std::collections::BTreeMap;
use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::quote;

use crate::Error;
use crate::config::Config;
use crate::model::{Kind, Model};

mod api;
pub(crate) mod applyconfig;
mod clientset;
mod conversion;
mod crd;
mod crd_v1beta1;
pub(crate) mod defaults;
mod fake;
mod informers;
mod listers;
mod manifest;
mod schema;

/// The generated files, keyed by path relative to the config root; sorted, so deterministic.
pub type Files = BTreeMap<PathBuf, String>;

/// What every emitter may look at.
pub(crate) struct EmitCtx<'a> {
    /// Paths, crate names, runtime dependency style.
    pub(crate) config: &'a Config,
    /// The checked model.
    pub(crate) model: &'a Model,
    /// License header text (already ends with a newline, or is empty).
    pub(crate) boilerplate: String,
}

/// One API group version as the facade emitters see it: user package or built-in list alike.
pub(crate) struct GroupVersion<'a> {
    /// Rust module of the group.
    pub(crate) module: &'a str,
    /// API version.
    pub(crate) version: &'a str,
    /// API group.
    pub(crate) group: &'a str,
    /// Kinds with a client (not `+genclient:noVerbs`).
    pub(crate) kinds: Vec<&'a Kind>,
    /// What the header names as the source, e.g. `apis/police/v1beta1`.
    pub(crate) source: String,
}

impl EmitCtx<'_> {
    /// All group versions (user packages and built-ins), sorted by (module, version).
    pub(crate) fn group_versions(&self) -> Vec<GroupVersion<'_>> {
        let input = self.config.input.display();
        let mut out: Vec<GroupVersion<'_>> = self
            .model
            .packages
            .iter()
            .map(|p| GroupVersion {
                module: &p.module,
                version: &p.version,
                group: &p.group,
                kinds: p.kinds.iter().filter(|k| !k.verbs.is_empty()).collect(),
                source: format!("{input}/{}/{}", p.module, p.version),
            })
            .collect();
        let builtins_source = self.builtins_source();
        out.extend(self.model.builtins.iter().map(|p| GroupVersion {
            module: &p.module,
            version: &p.version,
            group: &p.group,
            kinds: p.kinds.iter().collect(),
            source: builtins_source.clone(),
        }));
        out.sort_by(|a, b| (a.module, a.version).cmp(&(b.module, b.version)));
        out
    }

    /// How headers name the built-ins list.
    pub(crate) fn builtins_source(&self) -> String {
        self.config
            .builtins
            .as_ref()
            .map_or_else(String::new, |p| p.display().to_string())
    }

    /// Formats `tokens` as a Rust file with the boilerplate and `@generated` header.
    pub(crate) fn rust_file(&self, source: &str, tokens: TokenStream) -> Result<String, Error> {
        let file: syn::File = syn::parse2(tokens).map_err(|error| {
            Error::Internal(format!("emitted code for {source} does not parse: {error}"))
        })?;
        Ok(format!(
            "{}// {}\n\n{}",
            self.boilerplate,
            crate::write::header(source),
            prettyplease::unparse(&file)
        ))
    }

    /// The directory of generated crate `part` (`api`, `clientset`, ...), relative to the root.
    pub(crate) fn crate_dir(&self, part: &str) -> PathBuf {
        self.config.output.join(part)
    }
}

/// Emits every generated file.
/// What the configured outputs leave out of the model (today: the v1beta1 CRDs' dropped defaults
/// and checks), one line each, for the user to read.
pub(crate) fn warnings(ctx: &EmitCtx<'_>) -> Result<Vec<String>, Error> {
    match &ctx.config.crd_v1beta1 {
        Some(_) => crd_v1beta1::warnings(ctx),
        None => Ok(Vec::new()),
    }
}

pub(crate) fn all(ctx: &EmitCtx<'_>) -> Result<Files, Error> {
    let mut files = Files::new();
    api::emit(ctx, &mut files)?;
    clientset::emit(ctx, &mut files)?;
    listers::emit(ctx, &mut files)?;
    informers::emit(ctx, &mut files)?;
    applyconfig::emit(ctx, &mut files)?;
    if let Some(crd_path) = &ctx.config.crd {
        files.insert(crd_path.clone(), crd::emit(ctx)?);
    }
    if let Some(crd_path) = &ctx.config.crd_v1beta1 {
        files.insert(crd_path.clone(), crd_v1beta1::emit(ctx)?);
    }
    Ok(files)
}

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

/// `(module, version)` of a group version body.
pub(crate) type GroupVersionKey = (String, String);

/// Doc attributes for `lines` (each prefixed with a space, as `///` would produce).
pub(crate) fn doc_attrs(lines: &[String]) -> TokenStream {
    let lines = lines.iter().map(|line| {
        if line.is_empty() {
            String::new()
        } else {
            format!(" {line}")
        }
    });
    quote! { #(#[doc = #lines])* }
}

/// Inner doc attributes (`//!`) for `lines`.
pub(crate) fn inner_doc_attrs(lines: &[String]) -> TokenStream {
    let lines = lines.iter().map(|line| {
        if line.is_empty() {
            String::new()
        } else {
            format!(" {line}")
        }
    });
    quote! { #(#![doc = #lines])* }
}
