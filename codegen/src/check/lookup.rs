//! Questions several checks ask of the parsed model: which struct or enum a name refers to,
//! whether a type mentions another, and what a kind gets by default.

use std::collections::BTreeSet;

use crate::model::Tag;
use crate::model::{EnumDef, FieldType, Package, Scope, StructDef, Verb};
use crate::names;

/// Type tags that make a struct a kind.
pub(super) fn is_genclient_tag(tag: &Tag) -> bool {
    matches!(
        tag,
        Tag::GenClient
            | Tag::NonNamespaced
            | Tag::NoStatus
            | Tag::NoVerbs
            | Tag::ReadOnly
            | Tag::OnlyVerbs(_)
            | Tag::SkipVerbs(_)
            | Tag::Method(_)
    )
}

/// The verbs a plain `+genclient` kind gets.
pub(super) fn all_verbs() -> BTreeSet<Verb> {
    Verb::ALL.into_iter().collect()
}

/// Whether `ty` (or what it wraps) names `name`.
pub(super) fn mentions(ty: &FieldType, name: &str) -> bool {
    match ty {
        FieldType::Named(n) => n == name,
        FieldType::Option(inner) | FieldType::Vec(inner) | FieldType::Map(inner) => {
            mentions(inner, name)
        }
        _ => false,
    }
}

/// The struct named `name` in `package`.
pub(super) fn find<'a>(package: &'a Package, name: &str) -> Option<&'a StructDef> {
    package.structs.iter().find(|def| def.name == name)
}

/// The enum named `name` in `package`.
pub(super) fn find_enum<'a>(package: &'a Package, name: &str) -> Option<&'a EnumDef> {
    package.enums.iter().find(|def| def.name == name)
}

/// Default scope, plural and singular of a kind.
pub(super) fn defaults(name: &str) -> (Scope, String, String) {
    (
        Scope::Namespaced,
        names::default_plural(name),
        name.to_ascii_lowercase(),
    )
}
