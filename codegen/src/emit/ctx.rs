//! What every emitter is given ([`EmitCtx`]: the config, the checked model, the boilerplate) and
//! the small helpers they all share: group versions, Rust file formatting with the header, doc
//! attributes.

use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::quote;

use crate::Error;
use crate::config::Config;
use crate::model::{Kind, Model};

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
            crate::generated::header(source),
            prettyplease::unparse(&file)
        ))
    }

    /// The directory of generated crate `part` (`api`, `clientset`, ...), relative to the root.
    pub(crate) fn crate_dir(&self, part: &str) -> PathBuf {
        self.config.output.join(part)
    }
}

/// `(module, version)` of a group version body.
pub(crate) type GroupVersionKey = (String, String);

/// Doc attributes for `lines` (each prefixed with a space, as `///` would produce).
pub(crate) fn doc_attrs(lines: &[String]) -> TokenStream {
    let lines = crate::rustdoc::escape(lines);
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
    let lines = crate::rustdoc::escape(lines);
    let lines = lines.iter().map(|line| {
        if line.is_empty() {
            String::new()
        } else {
            format!(" {line}")
        }
    });
    quote! { #(#![doc = #lines])* }
}
