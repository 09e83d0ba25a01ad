//! Every naming decision codegen makes, in one place.
//!
//! Emitters never build identifiers themselves: they ask here, so `WhiteList` becomes
//! `white_lists()` / `WhiteListClient` / `WhiteListLister` the same way in every generated crate.
//! Mirrors code-generator's namers (`namer.NewPrivatePluralNamer` and its exception table).

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use crate::model::{FieldType, Kind};

/// Kinds whose English plural is not the regular one (client-go's `pluralExceptions`).
const IRREGULAR: [(&str, &str); 3] = [
    ("Endpoints", "Endpoints"),
    ("SecurityContextConstraints", "SecurityContextConstraints"),
    ("Person", "People"),
];

/// Regular English plural of a CamelCase word, irregulars from the table above.
pub(crate) fn plural_camel(word: &str) -> String {
    if let Some((_, plural)) = IRREGULAR.iter().find(|(singular, _)| *singular == word) {
        return (*plural).to_owned();
    }
    let lower = word.to_ascii_lowercase();
    let consonant_y = lower.ends_with('y')
        && !matches!(
            lower.chars().rev().nth(1),
            Some('a' | 'e' | 'i' | 'o' | 'u')
        );
    if consonant_y {
        format!("{}ies", &word[..word.len() - 1])
    } else if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|end| lower.ends_with(end))
    {
        format!("{word}es")
    } else {
        format!("{word}s")
    }
}

/// The default URL plural of a kind: `WhiteList` -> `whitelists`.
pub(crate) fn default_plural(kind: &str) -> String {
    plural_camel(kind).to_ascii_lowercase()
}

/// `WhiteList` -> `white_list`, `HTTPRoute` -> `http_route`, `CronJob` -> `cron_job`.
pub(crate) fn snake(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let prev_lower =
                i > 0 && (chars[i - 1].is_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let prev_upper = i > 0 && chars[i - 1].is_uppercase();
            if i > 0 && (prev_lower || (prev_upper && next_lower)) {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else if c == '-' || c == '.' {
            out.push('_');
        } else {
            out.push(c);
        }
    }
    out
}

/// serde's `rename_all = "camelCase"` applied to a field name (`allow_none` -> `allowNone`,
/// `type_` -> `type`).
pub(crate) fn camel(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut upper_next = false;
    for c in field.chars() {
        if c == '_' {
            upper_next = true;
        } else if upper_next {
            out.extend(c.to_uppercase());
            upper_next = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// An identifier, as a raw identifier when it is a keyword (`r#type`).
pub(crate) fn ident(name: &str) -> Ident {
    if is_keyword(name) {
        Ident::new_raw(name, Span::call_site())
    } else {
        Ident::new(name, Span::call_site())
    }
}

fn is_keyword(name: &str) -> bool {
    const KEYWORDS: [&str; 39] = [
        "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern",
        "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
        "pub", "ref", "return", "static", "struct", "trait", "true", "type", "unsafe", "use",
        "where", "while", "abstract", "box", "final", "gen", "try",
    ];
    KEYWORDS.contains(&name)
}

/// Names derived from one kind, shared by all emitters.
pub(crate) struct KindNames {
    /// The type: `WhiteList`.
    pub(crate) ty: Ident,
    /// Accessor on the group client / lister / informer group: `white_lists`.
    pub(crate) accessor: Ident,
    /// Typed client: `WhiteListClient`.
    pub(crate) client: Ident,
    /// Typed lister: `WhiteListLister`.
    pub(crate) lister: Ident,
    /// Namespace lister: `WhiteListNamespaceLister`.
    pub(crate) namespace_lister: Ident,
    /// Typed informer: `WhiteListInformer`.
    pub(crate) informer: Ident,
    /// List type alias in the api crate: `WhiteListList`.
    pub(crate) list: Ident,
}

/// The names of one kind.
pub(crate) fn for_kind(kind: &Kind) -> KindNames {
    let name = kind.name.as_str();
    KindNames {
        ty: ident(name),
        accessor: ident(&accessor(kind)),
        client: ident(&format!("{name}Client")),
        lister: ident(&format!("{name}Lister")),
        namespace_lister: ident(&format!("{name}NamespaceLister")),
        informer: ident(&format!("{name}Informer")),
        list: ident(&format!("{name}List")),
    }
}

/// `white_lists` for `WhiteList`; with a custom plural the plural's own spelling is kept
/// (`+kubegen:plural=fish` on `Fish` -> `fish`), split at the kind's word boundaries when the
/// plural starts with the kind name.
fn accessor(kind: &Kind) -> String {
    if kind.plural == default_plural(&kind.name) {
        return snake(&plural_camel(&kind.name));
    }
    let lower = kind.name.to_ascii_lowercase();
    match kind.plural.strip_prefix(&lower) {
        Some(suffix) => format!("{}{}", snake(&kind.name), suffix),
        None => snake(&kind.plural),
    }
}

/// The group-version accessor on the clientset / informer factory: `police_v1beta1`.
pub(crate) fn group_version(module: &str, version: &str) -> Ident {
    ident(&format!("{}_{}", module, version))
}

/// Per group-version client type: `PoliceV1beta1Client`.
pub(crate) fn group_type(module: &str, version: &str, suffix: &str) -> Ident {
    ident(&format!(
        "{}{}{}",
        upper_camel(module),
        upper_camel(version),
        suffix
    ))
}

/// `cluster_provisioner` -> `ClusterProvisioner`, `v1beta1` -> `V1beta1`.
pub(crate) fn upper_camel(snake_name: &str) -> String {
    snake_name
        .split('_')
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect::<String>(),
                None => String::new(),
            }
        })
        .collect()
}

/// The Rust spelling of a field type in generated code.
pub(crate) fn rust_type(ty: &FieldType) -> TokenStream {
    match ty {
        FieldType::String => quote!(::std::string::String),
        FieldType::Bool => quote!(bool),
        FieldType::I32 => quote!(i32),
        FieldType::I64 => quote!(i64),
        FieldType::F64 => quote!(f64),
        FieldType::Number => quote!(::serde_json::Number),
        FieldType::Quantity => quote!(::k8s_openapi::apimachinery::pkg::api::resource::Quantity),
        FieldType::IntOrString => {
            quote!(::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString)
        }
        FieldType::Time => quote!(::k8s_openapi::apimachinery::pkg::apis::meta::v1::Time),
        FieldType::ObjectMeta => {
            quote!(::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta)
        }
        FieldType::Bytes => quote!(::k8s_openapi::ByteString),
        FieldType::Json => quote!(::serde_json::Value),
        FieldType::WellKnown(well_known) => {
            let path = well_known.rust_path();
            let segments = path.split("::").map(ident);
            quote!(#(::#segments)*)
        }
        FieldType::Option(inner) => {
            let inner = rust_type(inner);
            quote!(::std::option::Option<#inner>)
        }
        FieldType::Vec(inner) => {
            let inner = rust_type(inner);
            quote!(::std::vec::Vec<#inner>)
        }
        FieldType::Map(inner) => {
            let inner = rust_type(inner);
            quote!(::std::collections::BTreeMap<::std::string::String, #inner>)
        }
        FieldType::Named(name) => {
            let name = ident(name);
            quote!(#name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals_follow_english_rules() {
        assert_eq!(default_plural("WhiteList"), "whitelists");
        assert_eq!(default_plural("NetworkPolicy"), "networkpolicies");
        assert_eq!(default_plural("Gateway"), "gateways");
        assert_eq!(default_plural("Ingress"), "ingresses");
        assert_eq!(default_plural("Endpoints"), "endpoints");
    }

    #[test]
    fn snake_case_handles_acronyms() {
        assert_eq!(snake("WhiteList"), "white_list");
        assert_eq!(snake("HTTPRoute"), "http_route");
        assert_eq!(snake("V1beta1"), "v1beta1");
    }

    #[test]
    fn camel_matches_serde() {
        assert_eq!(camel("allow_none"), "allowNone");
        assert_eq!(camel("type_"), "type");
        assert_eq!(camel("last_transition_time"), "lastTransitionTime");
    }

    #[test]
    fn keywords_become_raw_identifiers() {
        assert_eq!(ident("type").to_string(), "r#type");
        assert_eq!(ident("spec").to_string(), "spec");
    }
}
