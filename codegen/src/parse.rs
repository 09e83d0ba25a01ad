//! Phase 1: read `apis/<group>/<version>/*.rs` with syn and build the model's packages.
//!
//! This is the only module that sees syn types. It records what was written (docs, tags, fields,
//! lines) and reports what it cannot read; deciding whether it *makes sense* is the checker's job.
//! Mirrors the parsing half of code-generator's gengo (which reads Go packages and their comments).

use std::fs;
use std::path::{Path, PathBuf};

use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Fields, Item, ItemEnum, ItemStruct, Lit, Meta};

use crate::diag::Diagnostics;
use crate::model::Tag;
use crate::model::{EnumDef, Field, FieldMarkers, Location, Package, StructDef, Variant};
use crate::names;
use crate::tags::{self, Placement};
use crate::types;
use crate::validation::Validation;

/// Reads every package under `input` (the directory on disk); `display` is how paths are shown in
/// diagnostics (usually `apis`). Packages come back sorted by (module, version).
pub(crate) fn packages(input: &Path, display: &Path, diags: &mut Diagnostics) -> Vec<Package> {
    let mut packages = Vec::new();
    for module in sorted_dirs(input, display, diags) {
        for version in sorted_dirs(&input.join(&module), &display.join(&module), diags) {
            let rel = Path::new(&module).join(&version);
            if let Some(package) = package(&input.join(&rel), &display.join(&rel), diags) {
                packages.push(package);
            }
        }
    }
    packages
}

/// Names of the sub-directories of `dir`, sorted.
fn sorted_dirs(dir: &Path, display: &Path, diags: &mut Diagnostics) -> Vec<String> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) => {
            let location = Location {
                file: display.to_path_buf(),
                line: 0,
            };
            diags.error(
                &location,
                format!("cannot read directory: {error}"),
                "check --input",
            );
            return Vec::new();
        }
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|entry| entry.file_name().to_str().map(str::to_owned))
        .collect();
    names.sort();
    names
}

/// Reads one `apis/<module>/<version>/` directory: `mod.rs` for package tags, every `*.rs` file
/// (sorted by name) for structs.
fn package(dir: &Path, display: &Path, diags: &mut Diagnostics) -> Option<Package> {
    let module = display.parent()?.file_name()?.to_str()?.to_owned();
    let version = display.file_name()?.to_str()?.to_owned();
    let location = Location {
        file: display.join("mod.rs"),
        line: 1,
    };
    let mod_file = read_file(&dir.join("mod.rs"), &location, diags)?;
    let (docs, package_tags) =
        docs_and_tags(&mod_file.attrs, Placement::Package, &location.file, diags);
    let mut group = String::new();
    let mut api_approved = None;
    let mut imported = false;
    for (tag, _) in package_tags {
        match tag {
            Tag::GroupName(name) => group = name,
            Tag::ApiApproved(value) => api_approved = Some(value),
            Tag::Imported => imported = true,
            _ => {}
        }
    }
    if group.is_empty() {
        diags.error(
            &location,
            "package has no `+groupName=` tag",
            "add `//! +groupName=<group>.example.com` to mod.rs",
        );
    }
    let mut defs = Defs::default();
    for file_name in rust_files(dir) {
        let file_display = display.join(&file_name);
        let file_location = Location {
            file: file_display.clone(),
            line: 1,
        };
        let parsed = if file_name.as_os_str() == "mod.rs" {
            Some(mod_file.clone())
        } else {
            read_file(&dir.join(&file_name), &file_location, diags)
        };
        for item in parsed.map(|file| file.items).unwrap_or_default() {
            item_defs(item, &file_display, diags, &mut defs);
        }
    }
    Some(Package {
        module,
        version,
        group,
        api_approved,
        imported,
        location,
        docs,
        structs: defs.structs,
        enums: defs.enums,
        kinds: Vec::new(),
    })
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| PathBuf::from(entry.file_name()))
                .filter(|name| name.extension().is_some_and(|ext| ext == "rs"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn read_file(path: &Path, location: &Location, diags: &mut Diagnostics) -> Option<syn::File> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) => {
            diags.error(
                location,
                format!("cannot read file: {error}"),
                "every package needs mod.rs",
            );
            return None;
        }
    };
    match syn::parse_file(&text) {
        Ok(file) => Some(file),
        Err(error) => {
            let line = error.span().start().line;
            let at = Location {
                file: location.file.clone(),
                line,
            };
            diags.error(
                &at,
                format!("not valid Rust: {error}"),
                "fix the syntax error",
            );
            None
        }
    }
}

/// The type definitions of one package, in file order.
#[derive(Default)]
struct Defs {
    structs: Vec<StructDef>,
    enums: Vec<EnumDef>,
}

/// Keeps structs and enums; ignores `use` and `mod` declarations; reports anything else.
fn item_defs(item: Item, file: &Path, diags: &mut Diagnostics, out: &mut Defs) {
    match item {
        Item::Struct(item) => {
            if let Some(def) = struct_def(&item, file, diags) {
                out.structs.push(def);
            }
        }
        Item::Enum(item) => {
            if let Some(def) = enum_def(&item, file, diags) {
                out.enums.push(def);
            }
        }
        Item::Use(_) | Item::Mod(_) => {}
        other => {
            let location = Location {
                file: file.to_path_buf(),
                line: other.span().start().line,
            };
            diags.error(
                &location,
                "only structs and unit-variant enums are supported in apis/",
                "move logic and other items out of apis/: codegen writes the impls",
            );
        }
    }
}

/// An enum of unit variants; any other enum is reported, naming the type and the variant.
fn enum_def(item: &ItemEnum, file: &Path, diags: &mut Diagnostics) -> Option<EnumDef> {
    let location = Location {
        file: file.to_path_buf(),
        line: item.ident.span().start().line,
    };
    let name = item.ident.to_string();
    if !item.generics.params.is_empty() {
        diags.error(
            &location,
            format!("enum `{name}` is generic"),
            "API types cannot be generic",
        );
    }
    let (docs, tags) = docs_and_tags(&item.attrs, Placement::Type, file, diags);
    for (_, tag_location) in tags {
        diags.error(
            &tag_location,
            format!("tags are not allowed on enum `{name}`"),
            "an enum becomes `type: string, enum: [...]`; put markers on the fields that use it",
        );
    }
    if item.variants.is_empty() {
        diags.error(
            &location,
            format!("enum `{name}` has no variants"),
            "list the allowed values as unit variants",
        );
    }
    let variants = item
        .variants
        .iter()
        .filter_map(|variant| variant_def(&name, variant, file, diags))
        .collect();
    Some(EnumDef {
        name,
        docs,
        variants,
        location,
    })
}

/// One unit variant with its JSON value; a variant with data or a discriminant is reported.
fn variant_def(
    enum_name: &str,
    variant: &syn::Variant,
    file: &Path,
    diags: &mut Diagnostics,
) -> Option<Variant> {
    let location = Location {
        file: file.to_path_buf(),
        line: variant.ident.span().start().line,
    };
    let name = variant.ident.to_string();
    let problem = if !matches!(variant.fields, Fields::Unit) {
        Some("carries data")
    } else if variant.discriminant.is_some() {
        Some("has a discriminant")
    } else {
        None
    };
    if let Some(problem) = problem {
        diags.error(
            &location,
            format!("variant `{enum_name}::{name}` {problem}: only unit-variant enums are supported"),
            "an API enum is a closed set of strings: write `Variant,` (JSON value via `+kubegen:value=`), or use a struct with one optional field per case",
        );
        return None;
    }
    let (docs, tags) = docs_and_tags(&variant.attrs, Placement::Variant, file, diags);
    let value = tags
        .into_iter()
        .find_map(|(tag, _)| match tag {
            Tag::Value(value) => Some(value),
            _ => None,
        })
        .unwrap_or_else(|| name.clone());
    Some(Variant {
        name,
        value,
        docs,
        location,
    })
}

fn struct_def(item: &ItemStruct, file: &Path, diags: &mut Diagnostics) -> Option<StructDef> {
    let location = Location {
        file: file.to_path_buf(),
        line: item.ident.span().start().line,
    };
    let name = item.ident.to_string();
    if !item.generics.params.is_empty() {
        diags.error(
            &location,
            format!("struct `{name}` is generic"),
            "API types cannot be generic",
        );
    }
    let (docs, tags) = docs_and_tags(&item.attrs, Placement::Type, file, diags);
    let mut fields = Vec::new();
    match &item.fields {
        Fields::Named(named) => {
            for field in &named.named {
                if let Some(field) = field_def(field, file, diags) {
                    fields.push(field);
                }
            }
        }
        _ => diags.error(
            &location,
            format!("struct `{name}` has no named fields"),
            "API types are structs with named fields",
        ),
    }
    Some(StructDef {
        name,
        docs,
        fields,
        location,
        tags,
    })
}

fn field_def(field: &syn::Field, file: &Path, diags: &mut Diagnostics) -> Option<Field> {
    let ident = field.ident.as_ref()?;
    let location = Location {
        file: file.to_path_buf(),
        line: ident.span().start().line,
    };
    let spelled = ident.to_string();
    let raw = spelled.starts_with("r#");
    let name = spelled.trim_start_matches("r#").to_owned();
    let (docs, tags) = docs_and_tags(&field.attrs, Placement::Field, file, diags);
    let mut markers = FieldMarkers::default();
    let mut json_name = names::camel(&name);
    for (tag, _) in tags {
        match tag {
            Tag::Json(json) => json_name = json,
            tag => apply_marker(&mut markers, tag),
        }
    }
    let ty = match types::field_type(&field.ty) {
        Ok(ty) => ty,
        Err((message, hint)) => {
            diags.error(&location, format!("field `{name}`: {message}"), hint);
            return None;
        }
    };
    Some(Field {
        name,
        raw,
        json_name,
        docs,
        ty,
        markers,
        location,
    })
}

fn apply_marker(markers: &mut FieldMarkers, tag: Tag) {
    match tag {
        Tag::Validation(rule) => match rule {
            Validation::Minimum(v) => markers.minimum = Some(v),
            Validation::Maximum(v) => markers.maximum = Some(v),
            Validation::ExclusiveMinimum(v) => markers.exclusive_minimum = v,
            Validation::ExclusiveMaximum(v) => markers.exclusive_maximum = v,
            Validation::UniqueItems(v) => markers.unique_items = v,
            Validation::Format(v) => markers.format = Some(v),
            Validation::Pattern(v) => markers.pattern = Some(v),
            Validation::Enum(v) => markers.enum_values = v,
            Validation::MinLength(v) => markers.min_length = Some(v),
            Validation::MaxLength(v) => markers.max_length = Some(v),
            Validation::MinItems(v) => markers.min_items = Some(v),
            Validation::MaxItems(v) => markers.max_items = Some(v),
        },
        Tag::Default(json) => markers.default = Some(json),
        Tag::Required => markers.required = true,
        Tag::Optional => markers.optional = true,
        Tag::ListType(list_type) => markers.list_type = Some(list_type),
        Tag::ListMapKeys(keys) => markers.list_map_keys = keys,
        Tag::Rule(rule) => markers.rules.push(rule),
        Tag::Schema(patch) => markers.schema = Some(patch),
        // `tags::parse` only lets field tags through at Placement::Field.
        _ => {}
    }
}

/// Splits doc attributes into prose lines (leading/trailing blank lines trimmed) and parsed tags.
/// Non-doc attributes are reported: apis/ holds bare structs, codegen writes the attributes.
fn docs_and_tags(
    attrs: &[Attribute],
    placement: Placement,
    file: &Path,
    diags: &mut Diagnostics,
) -> (Vec<String>, Vec<(Tag, Location)>) {
    let mut docs = Vec::new();
    let mut tags = Vec::new();
    for attr in attrs {
        let location = Location {
            file: file.to_path_buf(),
            line: attr.span().start().line,
        };
        let Some(text) = doc_text(attr) else {
            diags.error(
                &location,
                "attributes are not allowed in apis/",
                "remove it: codegen writes derives and serde attributes itself; use tags in doc comments",
            );
            continue;
        };
        let line = text
            .strip_prefix(' ')
            .unwrap_or(&text)
            .trim_end()
            .to_owned();
        if line.trim_start().starts_with('+') {
            match tags::parse(&line, placement, &location) {
                Ok(tag) => tags.push((tag, location)),
                Err(error) => diags.error(&location, error.message, error.hint),
            }
        } else {
            docs.push(line);
        }
    }
    while docs.first().is_some_and(|line| line.trim().is_empty()) {
        docs.remove(0);
    }
    while docs.last().is_some_and(|line| line.trim().is_empty()) {
        docs.pop();
    }
    (docs, tags)
}

fn doc_text(attr: &Attribute) -> Option<String> {
    let Meta::NameValue(meta) = &attr.meta else {
        return None;
    };
    if !meta.path.is_ident("doc") {
        return None;
    }
    match &meta.value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(text),
            ..
        }) => Some(text.value()),
        _ => None,
    }
}
