//! Type tags -> [`Kind`]: scope, verbs, status, CRD names, custom methods, with client-go's rules.
//!
//! Mirrors code-generator's `util.ParseClientGenTags`: `+genclient:readonly` means get/list/watch,
//! `onlyVerbs` and `skipVerbs` exclude each other, `updateStatus` needs a `status` field and no
//! `noStatus`; custom methods are limited to the verbs the generic client can perform.

use std::collections::BTreeSet;

use super::lookup::{all_verbs, defaults, find, is_genclient_tag};
use crate::diag::Diagnostics;
use crate::model::Tag;
use crate::model::{CustomMethod, FieldType, Kind, Location, Package, Scope, StructDef, Verb};

/// Builds the kind declared by `def`'s tags, or `None` when `def` is a plain struct.
pub(super) fn resolve(package: &Package, def: &StructDef, diags: &mut Diagnostics) -> Option<Kind> {
    let at = &def.location;
    let has_genclient = def.tags.iter().any(|(tag, _)| *tag == Tag::GenClient);
    if !has_genclient {
        // CEL rules validate any struct; every other type tag makes sense on kinds only.
        let kind_tags = def
            .tags
            .iter()
            .filter(|(tag, _)| !matches!(tag, Tag::Rule(_)));
        for (tag, location) in kind_tags {
            let what = if is_genclient_tag(tag) {
                "`+genclient:*` tags"
            } else {
                "CRD markers"
            };
            diags.error(
                location,
                format!("{what} on `{}`, which has no `+genclient` tag", def.name),
                "add `/// +genclient` to make it an API kind, or remove the tag",
            );
        }
        return None;
    }
    let (mut scope, mut plural, mut singular) = defaults(&def.name);
    let mut kind_tags = KindTags::default();
    let mut kind = Kind {
        name: def.name.clone(),
        module: package.module.clone(),
        group: package.group.clone(),
        version: package.version.clone(),
        scope,
        verbs: BTreeSet::new(),
        has_status: false,
        plural: String::new(),
        singular: String::new(),
        short_names: Vec::new(),
        categories: Vec::new(),
        print_columns: Vec::new(),
        scale: None,
        methods: Vec::new(),
        location: at.clone(),
        builtin: false,
        storage_version: false,
    };
    for (tag, location) in &def.tags {
        match tag {
            Tag::NonNamespaced => scope = Scope::Cluster,
            Tag::NoStatus => kind_tags.no_status = true,
            Tag::NoVerbs => kind_tags.no_verbs = Some(location.clone()),
            Tag::ReadOnly => kind_tags.readonly = Some(location.clone()),
            Tag::OnlyVerbs(verbs) => kind_tags.only = Some((verbs.clone(), location.clone())),
            Tag::SkipVerbs(verbs) => kind_tags.skip = Some((verbs.clone(), location.clone())),
            Tag::Method(method) => kind.methods.push(method.clone()),
            Tag::Plural(value) => plural = value.clone(),
            Tag::Singular(value) => singular = value.clone(),
            Tag::ShortNames(values) => kind.short_names = values.clone(),
            Tag::Categories(values) => kind.categories = values.clone(),
            Tag::PrintColumn(column) => kind.print_columns.push(column.clone()),
            Tag::Scale(scale) => kind.scale = Some(scale.clone()),
            Tag::StorageVersion => kind.storage_version = true,
            _ => {}
        }
    }
    check_names(&def.name, &plural, &singular, &kind.short_names, at, diags);
    kind.scope = scope;
    kind.plural = plural;
    kind.singular = singular;
    let status_field = check_fields(def, diags);
    kind.has_status = status_field && !kind_tags.no_status;
    kind.verbs = kind_tags.verbs(&def.name, kind.has_status, diags);
    for method in &kind.methods {
        check_method(package, &kind, method, diags);
    }
    Some(kind)
}

/// The verb-related tags of one kind, with where they were written.
#[derive(Default)]
struct KindTags {
    no_status: bool,
    no_verbs: Option<Location>,
    readonly: Option<Location>,
    only: Option<(Vec<Verb>, Location)>,
    skip: Option<(Vec<Verb>, Location)>,
}

impl KindTags {
    fn verbs(&self, name: &str, has_status: bool, diags: &mut Diagnostics) -> BTreeSet<Verb> {
        let conflict = |diags: &mut Diagnostics, at: &Location, a: &str, b: &str| {
            diags.error(
                at,
                format!("conflicting tags on `{name}`: `{a}` and `{b}`"),
                "keep one of them: onlyVerbs lists what to keep, skipVerbs what to drop",
            );
        };
        if let (Some((_, at)), Some(_)) = (&self.only, &self.skip) {
            conflict(diags, at, "+genclient:onlyVerbs", "+genclient:skipVerbs");
        }
        if let (Some(at), true) = (&self.readonly, self.only.is_some() || self.skip.is_some()) {
            conflict(
                diags,
                at,
                "+genclient:readonly",
                "+genclient:onlyVerbs/skipVerbs",
            );
        }
        if let (Some(at), true) = (
            &self.no_verbs,
            self.only.is_some() || self.readonly.is_some(),
        ) {
            conflict(
                diags,
                at,
                "+genclient:noVerbs",
                "+genclient:onlyVerbs/readonly",
            );
        }
        if let Some((only, at)) = &self.only
            && only.contains(&Verb::UpdateStatus)
            && !has_status
        {
            diags.error(
                    at,
                    format!("`updateStatus` requested for `{name}`, which has no status subresource"),
                    "add a `status: Option<...Status>` field or drop `updateStatus` (or `+genclient:noStatus`)",
                );
        }
        let mut verbs = if self.no_verbs.is_some() {
            BTreeSet::new()
        } else if self.readonly.is_some() {
            [Verb::Get, Verb::List, Verb::Watch].into_iter().collect()
        } else if let Some((only, _)) = &self.only {
            only.iter().copied().collect()
        } else {
            let skip: BTreeSet<Verb> = self
                .skip
                .iter()
                .flat_map(|(verbs, _)| verbs.iter().copied())
                .collect();
            all_verbs().difference(&skip).copied().collect()
        };
        if !has_status {
            verbs.remove(&Verb::UpdateStatus);
        }
        verbs
    }
}

/// Checks `metadata` and `status`; returns whether a `status` field exists.
fn check_fields(def: &StructDef, diags: &mut Diagnostics) -> bool {
    let field = |name: &str| def.fields.iter().find(|field| field.name == name);
    match field("metadata") {
        Some(meta) if meta.ty == FieldType::ObjectMeta => {}
        Some(meta) => diags.error(
            &meta.location,
            format!("`{}.metadata` must be `ObjectMeta`", def.name),
            "write `pub metadata: ObjectMeta` (k8s-openapi's ObjectMeta, not optional)",
        ),
        None => diags.error(
            &def.location,
            format!("kind `{}` has no `metadata` field", def.name),
            "add `pub metadata: ObjectMeta` as the first field",
        ),
    }
    for reserved in ["api_version", "kind"] {
        if let Some(field) = field(reserved) {
            diags.error(
                &field.location,
                format!("kind `{}` declares `{reserved}`", def.name),
                "remove it: codegen writes `apiVersion` and `kind` itself",
            );
        }
    }
    let Some(status) = field("status") else {
        return false;
    };
    if !matches!(&status.ty, FieldType::Option(inner) if matches!(**inner, FieldType::Named(_))) {
        diags.error(
            &status.location,
            format!("`{}.status` must be `Option<SomeStatus>`", def.name),
            "a newly created object has no status: wrap the status struct in `Option`",
        );
    }
    true
}

fn check_names(
    kind: &str,
    plural: &str,
    singular: &str,
    short_names: &[String],
    at: &Location,
    diags: &mut Diagnostics,
) {
    let dns_label = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    };
    // The API server validates plural and singular as DNS-1035 labels (a letter first, no `-` at
    // the end); they also become Rust identifiers, which cannot start with a digit.
    let dns_1035_label = |s: &str| {
        dns_label(s) && s.starts_with(|c: char| c.is_ascii_lowercase()) && !s.ends_with('-')
    };
    for (what, value) in [("plural", plural), ("singular", singular)] {
        if !dns_1035_label(value) {
            diags.error(
                at,
                format!("{what} `{value}` of `{kind}` is not a lower-case DNS-1035 label"),
                "use lower-case letters, digits and `-`, starting with a letter",
            );
        }
    }
    for short in short_names {
        if !dns_label(short) {
            diags.error(
                at,
                format!("short name `{short}` is not lower-case"),
                "e.g. `wl`",
            );
        }
    }
}

/// client-go allows extensions for these verbs; list/watch/delete extensions would need their
/// own response shapes, which the generic client does not offer.
const METHOD_VERBS: [Verb; 4] = [Verb::Get, Verb::Create, Verb::Update, Verb::Patch];

fn check_method(package: &Package, kind: &Kind, method: &CustomMethod, diags: &mut Diagnostics) {
    let at = &method.location;
    if !METHOD_VERBS.contains(&method.verb) {
        diags.error(
            at,
            format!(
                "custom method `{}` uses verb `{}`",
                method.name,
                method.verb.tag_name()
            ),
            "custom methods support verb=get, create, update or patch",
        );
    }
    if method.subresource.is_none() {
        diags.error(
            at,
            format!("custom method `{}` has no `subresource=`", method.name),
            "custom methods act on a subresource, e.g. `subresource=scale`; plain verbs are generated already",
        );
    }
    if method.verb == Verb::Patch && method.input.is_some() {
        diags.error(
            at,
            format!("custom method `{}`: patch takes no `input=`", method.name),
            "the body is a `Patch`",
        );
    }
    let standard = [
        "get",
        "list",
        "watch",
        "create",
        "update",
        "update_status",
        "patch",
        "patch_status",
        "delete",
        "delete_collection",
    ];
    let snake = crate::names::snake(&method.name);
    if standard.contains(&snake.as_str())
        || kind
            .methods
            .iter()
            .filter(|m| m.name == method.name)
            .count()
            > 1
    {
        diags.error(
            at,
            format!("custom method name `{}` is already taken", method.name),
            "pick another name",
        );
    }
    for ty in [&method.input, &method.result].into_iter().flatten() {
        if !ty.starts_with("k8s_openapi::") && find(package, ty).is_none() {
            diags.error(
                at,
                format!(
                    "custom method `{}` refers to unknown type `{ty}`",
                    method.name
                ),
                "use a struct of this package or a full `k8s_openapi::...` path",
            );
        }
    }
}
