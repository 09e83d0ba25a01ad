//! The apply configuration types as data, before they become tokens: what `user.rs` (from the
//! model) and `builtin.rs` (from the OpenAPI schemas) build, and `mod.rs` emits. With the names and
//! paths every generated configuration type is referred to by.

use proc_macro2::TokenStream;
use quote::quote;

use crate::emit::ctx::GroupVersionKey;
use crate::model::Scope;
use crate::names;

/// One generated apply configuration type.
pub(crate) struct ConfigType {
    /// `(module, version)` it is emitted in, e.g. `("apps", "v1")`.
    pub(crate) at: GroupVersionKey,
    /// The API type's name, e.g. `StatefulSetSpec` (the struct is `<name>ApplyConfiguration`).
    pub(crate) name: String,
    /// What the type's doc comment names as its source (a component schema, or `apis/..: Type`).
    pub(crate) source: String,
    /// Fields in schema (or declaration) order.
    pub(crate) fields: Vec<ConfigField>,
    /// Set when the type is a kind.
    pub(crate) kind: Option<KindInfo>,
}

/// One field of a [`ConfigType`].
pub(crate) struct ConfigField {
    /// Rust field name (snake case), e.g. `service_name`.
    pub(crate) rust: String,
    /// JSON name, exactly as the schema (or serde) spells it, e.g. `serviceName`.
    pub(crate) json: String,
    /// The value's shape.
    pub(crate) shape: Shape,
    /// The schema says `nullable: true`: the configuration can hold an explicit `null`, which
    /// an apply stores (and owns) as the field's value.
    pub(crate) nullable: bool,
}

/// How a field holds its value, which decides its builder.
pub(crate) enum Shape {
    /// A scalar or a nested configuration: `with_x(value)` sets it.
    One(TokenStream),
    /// A list of these: `with_x(values)` appends.
    List(TokenStream),
    /// A map from string to these: `with_x(entries)` inserts.
    Map(TokenStream),
}

/// What a kind's configuration adds to a plain one.
pub(crate) struct KindInfo {
    /// Namespaced or cluster-scoped: the constructor's arguments.
    pub(crate) scope: Scope,
    /// Whether `extract_<kind>_status` exists.
    pub(crate) has_status: bool,
    /// The API type in the api crate, for `extract_<kind>`.
    pub(crate) api_type: TokenStream,
}

/// `StatefulSetSpec` -> `StatefulSetSpecApplyConfiguration`.
pub(crate) fn config_ident(name: &str) -> proc_macro2::Ident {
    names::ident(&format!("{name}ApplyConfiguration"))
}

/// The path of a configuration type from anywhere in the crate.
pub(crate) fn config_path(module: &str, version: &str, name: &str) -> TokenStream {
    let (module, version, ty) = (
        names::ident(module),
        names::ident(version),
        config_ident(name),
    );
    quote!(crate::#module::#version::#ty)
}
