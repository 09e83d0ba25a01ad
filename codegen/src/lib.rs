//! kubegen's code generator: annotated structs in `apis/` go in; API types, a typed clientset,
//! listers, informers and CRD manifests come out. The Rust counterpart of code-generator's
//! client-gen, lister-gen, informer-gen and deepcopy-gen, plus controller-gen's CRD generation.
//!
//! # Pipeline
//! Fixed phases, each in its own module, so each can be read (and tested) alone:
//! 1. **parse** (`parse.rs`, `types.rs`, `tags.rs`, `builtins.rs`): syn reads the files; tags are
//!    parsed from the closed list; the result is the [`model`] (no syn types past this point).
//! 2. **check** (`check/`): every semantic problem is collected, each with `file:line` and a hint.
//!    Any problem stops the run before anything is written.
//! 3. **emit** (`emit/`): pure functions from the model to `TokenStream`s; names come from
//!    `names.rs`, `quote!` only interpolates.
//! 4. **format**: prettyplease, then the boilerplate and `@generated` header.
//! 5. **write** (`write.rs`): write changed files and delete stale ones, or `--check` and diff.
//!
//! Beside the pipeline, [`init()`] (`init.rs`) scaffolds a new operator repository whose
//! `kubegen.toml` points this generator at its `apis/`; `runtime.rs` says how generated crates
//! (and the scaffold) depend on kubegen's runtime crates.
//!
//! ```no_run
//! let config = kubegen_codegen::Config::load(std::path::Path::new("kubegen.toml"))?;
//! let files = kubegen_codegen::generate(&config)?;
//! let changes = kubegen_codegen::write(&config, &files)?;
//! println!("{} files changed", changes.changed.len());
//! # Ok::<(), kubegen_codegen::Error>(())
//! ```
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both). `check` sits above `emit`: it asks
//! `emit/defaults.rs` whether a `+kubegen:default` value can be emitted for its field.
//! - `check`
//! - `emit`, `import`, `init`, `write`
//! - `parse`, `builtins`, `config`
//! - `tags`, `types`, `diag`, `names`, `error`
//! - `model`
//! - `validation`
//! - `generated`, `runtime`, `rustdoc`, `tag_syntax`, `wellknown`

mod builtins;
mod check;
mod config;
mod diag;
mod emit;
mod error;
mod generated;
mod import;
mod init;
pub mod model;
mod names;
mod parse;
mod runtime;
mod rustdoc;
mod tag_syntax;
mod tags;
#[cfg(test)]
mod testutil;
mod types;
mod validation;
pub mod wellknown;
mod write;

pub use config::{Config, ConversionWebhook, ImportConfig};
pub use diag::Diagnostic;
pub use error::Error;
pub use generated::Files;
pub use import::{Imported, import, import_text};
pub use init::{InitOptions, Scaffold, init};
pub use runtime::{GitReference, GitSource, Runtime};
pub use write::Changes;

/// Parses and checks the input of `config` into the model.
///
/// # Errors
/// [`Error::Invalid`] with every problem found.
pub fn load_model(config: &Config) -> Result<model::Model, Error> {
    let mut diags = diag::Diagnostics::default();
    let mut model = model::Model {
        packages: parse::packages(&config.resolve(&config.input), &config.input, &mut diags),
        builtins: Vec::new(),
    };
    if let Some(list) = &config.builtins {
        let full = config.resolve(list);
        if full.exists() {
            model.builtins = builtins::read(&full, list, &mut diags);
        }
    }
    check::check(&mut model, &mut diags);
    if diags.is_empty() {
        Ok(model)
    } else {
        Err(Error::Invalid(diags.into_sorted()))
    }
}

/// Runs parse, check, emit and format: returns every generated file (path relative to the root).
///
/// # Errors
/// Input problems ([`Error::Invalid`]), an unreadable boilerplate, or an internal error.
pub fn generate(config: &Config) -> Result<Files, Error> {
    with_context(config, emit::all)
}

/// What the generated files leave out of `apis/` and the user should know: each default and check
/// (CEL rule, set or map list) the v1beta1 CRDs cannot carry, naming the CRD, versions and field.
///
/// # Errors
/// As [`generate`].
pub fn warnings(config: &Config) -> Result<Vec<String>, Error> {
    with_context(config, emit::warnings)
}

/// Loads the model and runs `emit` on it.
fn with_context<T>(
    config: &Config,
    run: impl FnOnce(&emit::ctx::EmitCtx<'_>) -> Result<T, Error>,
) -> Result<T, Error> {
    let model = load_model(config)?;
    let boilerplate = match &config.boilerplate {
        Some(path) => {
            let full = config.resolve(path);
            let text = std::fs::read_to_string(&full)
                .map_err(|source| Error::ReadBoilerplate { path: full, source })?;
            if text.is_empty() || text.ends_with('\n') {
                text
            } else {
                format!("{text}\n")
            }
        }
        None => String::new(),
    };
    let ctx = emit::ctx::EmitCtx {
        config,
        model: &model,
        boilerplate,
    };
    run(&ctx)
}

/// Writes `files` under the config root; deletes stale generated files under `config.output`.
///
/// # Errors
/// [`Error::Write`] when a file cannot be written or deleted.
pub fn write(config: &Config, files: &Files) -> Result<Changes, Error> {
    write::write(&config.root, &config.output, files)
}

/// Compares `files` with the tree on disk; the returned [`Changes`] is empty when up to date.
pub fn check(config: &Config, files: &Files) -> Changes {
    write::check(&config.root, &config.output, files)
}
