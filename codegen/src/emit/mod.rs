//! Phase 3: model -> files. Pure functions: each emitter returns a `TokenStream` (or YAML text for
//! CRDs), this module formats it with prettyplease and puts the header on top.
//!
//! Generated crates share one layout: `src/lib.rs` declares one `#[rustfmt::skip]` module per API
//! group (`src/<module>.rs`), which declares one module per version (`src/<module>/<version>.rs`).
//! Mirrors code-generator's per-generator output packages, minus its string templates.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `clientset`, `informers`
//! - `api`, `applyconfig`, `fake`, `listers`
//! - `crd_v1beta1`, `tree`
//! - `crd`, `manifest`
//! - `conversion`, `ctx`, `defaults`, `schema`

use crate::Error;
use crate::generated::Files;
use ctx::EmitCtx;

mod api;
pub(crate) mod applyconfig;
mod clientset;
mod conversion;
mod crd;
mod crd_v1beta1;
pub(crate) mod ctx;
pub(crate) mod defaults;
mod fake;
mod informers;
mod listers;
mod manifest;
mod schema;
mod tree;

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
        files.insert(crd_path.clone(), crd::emit(ctx, crd::Owner::User)?);
    }
    if let Some(crd_path) = &ctx.config.import.crd {
        files.insert(crd_path.clone(), crd::emit(ctx, crd::Owner::Imported)?);
    }
    if let Some(crd_path) = &ctx.config.crd_v1beta1 {
        files.insert(crd_path.clone(), crd_v1beta1::emit(ctx)?);
    }
    Ok(files)
}
