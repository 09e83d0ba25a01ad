//! `kubegen import`: CustomResourceDefinitions in, annotated Rust types for `apis/` out. The
//! inverse of the CRD emitter (`emit/crd.rs`), so the API types, clientset, listers, informers,
//! apply configurations and fakes of any CRD come from the normal generation. Fills the place
//! kopium has for kube-rs, with the rest of client-go's generated code on top.
//!
//! # Pipeline
//! Like the generator, in fixed steps, problems collected with the file, CRD, version and schema
//! path they concern:
//! 1. **read** (`read.rs`): files, directories or stdin, multi-document YAML, v1 and v1beta1.
//! 2. **shape** (`shape.rs`): each served version's schema becomes structs, typed fields and
//!    markers (the IR); what no named marker carries goes into a `+kubegen:schema=` merge patch,
//!    so regenerating the CRD gives the input schema back.
//! 3. **name** (`naming.rs`): deterministic names, identical structs once, the rename table.
//! 4. **render** (`render.rs`): `apis/<module>/<version>/mod.rs` and one file per kind.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two
//! modules import each other (`hack/import-layers.py` checks both).
//! - `read`, `render`
//! - `shape`, `naming`
//! - `markers`
//! - `ir`, `problems`
//!
//! The output is checked by loading it like any `apis/` (the binary does it after writing; the
//! tests do it in memory), so what `import` writes is what `kubegen` accepts.
//!
//! # Guarantees
//! - Lossless decoding: every optional field is an `Option` (absent stays absent), and a
//!   `nullable` one (required or not) an `Option<Option<T>>`, so `null` stays `null` (the API
//!   server drops a `null` it may not hold, so only nullable fields ever read back one); numbers keep their type (`i64` for
//!   integers, never `f64`), strings with an `enum` stay `String`, so an unknown value decodes and
//!   re-encodes as is. The types never fill in schema defaults when decoding. The structs of an
//!   imported package (kinds aside) keep the keys they do not know (`unknown_fields`, see
//!   `Package::keeps_unknown_fields`): the CRD's owner adds fields as it releases, and an
//!   operator built on an older import must not drop them on the next update.
//! - Deterministic: the same CRDs give the same bytes.

mod ir;
mod markers;
mod naming;
mod problems;
mod read;
mod render;
mod shape;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::error::Error;
use crate::generated::Files;
use read::Crd;

pub(crate) use problems::Problems;

/// What an import produced: the files (paths relative to the config root) and warnings.
#[derive(Debug, Default)]
pub struct Imported {
    /// `apis/<module>/<version>/*.rs`.
    pub files: Files,
    /// Things the user should know (a version not served, a scale subresource not carried...).
    pub warnings: Vec<String>,
}

/// Reads the CRDs in `inputs` (files, directories, `-` for stdin) and renders their packages.
///
/// # Errors
/// [`Error::Import`] with every problem found (file, CRD, version, schema path).
pub fn import(config: &Config, inputs: &[PathBuf]) -> Result<Imported, Error> {
    let mut problems = Problems::default();
    let crds = read::read_all(inputs, &mut problems);
    render_or_report(config, &crds, problems)
}

/// The same as [`import`] for CRD text already in memory (tests, tools).
///
/// # Errors
/// As [`import`].
pub fn import_text(config: &Config, label: &str, text: &str) -> Result<Imported, Error> {
    let mut problems = Problems::default();
    let crds = read::documents(label, text, &mut problems);
    render_or_report(config, &crds, problems)
}

/// Renders `crds`, then answers the files with the warnings, or every problem found reading and
/// rendering them.
fn render_or_report(
    config: &Config,
    crds: &[Crd],
    mut problems: Problems,
) -> Result<Imported, Error> {
    let files = render_all(config, crds, &mut problems);
    if problems.is_empty() {
        Ok(Imported {
            files,
            warnings: problems.warnings().to_vec(),
        })
    } else {
        Err(Error::Import(problems.lines().to_vec()))
    }
}

/// One CRD version to import into a package.
struct Entry<'a> {
    crd: &'a Crd,
    version: &'a read::CrdVersion,
}

fn render_all(config: &Config, crds: &[Crd], problems: &mut Problems) -> Files {
    let mut packages: BTreeMap<(String, String), Vec<Entry<'_>>> = BTreeMap::new();
    for crd in crds {
        for version in &crd.versions {
            packages
                .entry((crd.group.clone(), version.name.clone()))
                .or_default()
                .push(Entry { crd, version });
        }
    }
    let groups: Vec<&str> = packages.keys().map(|(group, _)| group.as_str()).collect();
    let modules = module_names(&groups);
    let mut files = Files::new();
    for ((group, version), mut entries) in packages {
        entries.sort_by(|a, b| a.crd.kind.cmp(&b.crd.kind));
        let module = modules.get(group.as_str()).cloned().unwrap_or_default();
        let dir = config.input.join(&module).join(&version);
        package(config, &dir, &group, &entries, problems, &mut files);
    }
    files
}

/// The Rust module of each group: its first label, or as many labels as make it unique
/// (`gateway.networking.k8s.io` and `gateway.networking.x-k8s.io` become `gateway_networking_k8s`
/// and `gateway_networking_x_k8s`).
fn module_names(groups: &[&str]) -> BTreeMap<String, String> {
    let label = |group: &str, count: usize| {
        let joined: Vec<&str> = group.split('.').take(count).collect();
        crate::names::snake(&joined.join("_").replace('-', "_"))
    };
    let mut out = BTreeMap::new();
    for group in groups {
        let labels = group.split('.').count();
        let mut count = 1;
        while count < labels
            && groups
                .iter()
                .any(|other| other != group && label(other, count) == label(group, count))
        {
            count += 1;
        }
        out.insert((*group).to_owned(), label(group, count));
    }
    out
}

fn package(
    config: &Config,
    dir: &Path,
    group: &str,
    entries: &[Entry<'_>],
    problems: &mut Problems,
    files: &mut Files,
) {
    let mut builder = shape::Builder {
        structs: Vec::new(),
        problems,
        max_depth: config.import.max_depth,
    };
    let mut roots = Vec::new();
    for entry in entries {
        let place = format!(
            "{} (CRD {}), version {}",
            entry.crd.source, entry.crd.name, entry.version.name
        );
        roots.push(builder.kind(&place, &entry.crd.kind, &entry.version.schema));
    }
    let names = naming::assign(&builder.structs, &roots, &config.import.rename);
    let mut sources = Vec::new();
    let mut modules = Vec::new();
    for (entry, &root) in entries.iter().zip(&roots) {
        let tags = kind_tags(entry, builder.problems);
        let docs = entry
            .version
            .schema
            .get("description")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default();
        let mut text = header(&entry.crd.name);
        text.push_str(&render::struct_text(
            &builder.structs[root],
            &entry.crd.kind,
            docs,
            Some(&tags),
            &names,
        ));
        for (index, def) in builder.structs.iter().enumerate() {
            if def.owner == entry.crd.kind && names.canon[index] == index && index != root {
                text.push('\n');
                text.push_str(&render::struct_text(def, names.of(index), "", None, &names));
            }
        }
        let file = crate::names::snake(&entry.crd.kind);
        files.insert(dir.join(format!("{file}.rs")), text);
        modules.push(file);
        sources.push(entry.crd.name.clone());
    }
    let mut module = header(&sources.join(", "));
    let _ = writeln!(module, "//! +groupName={group}");
    if let Some(approved) = entries
        .iter()
        .find_map(|entry| entry.crd.api_approved.as_deref())
    {
        let _ = writeln!(module, "//! +kubegen:apiApproved={approved}");
    }
    let _ = writeln!(module, "//! +kubegen:imported");
    let _ = writeln!(module, "//!");
    let _ = writeln!(
        module,
        "//! Imported by `kubegen import` from the CustomResourceDefinitions {}.\n",
        sources.join(", ")
    );
    for file in modules {
        let _ = writeln!(module, "mod {file};");
    }
    files.insert(dir.join("mod.rs"), module);
}

fn header(source: &str) -> String {
    format!(
        "// {}\n",
        crate::generated::header(&format!("kubegen import of {source}"))
    )
}

/// The type tags of a kind: `+genclient`, scope, names, columns, storage version.
fn kind_tags(entry: &Entry<'_>, problems: &mut Problems) -> Vec<String> {
    let (crd, version) = (entry.crd, entry.version);
    let place = format!(
        "{} (CRD {}), version {}",
        crd.source, crd.name, version.name
    );
    let mut tags = vec!["+genclient".to_owned()];
    if !crd.namespaced {
        tags.push("+genclient:nonNamespaced".to_owned());
    }
    let has_status_field = version.schema.pointer("/properties/status").is_some();
    if has_status_field && !version.status {
        tags.push("+genclient:noStatus".to_owned());
    }
    if version.status && !has_status_field {
        problems.warn(
            &place,
            "a status subresource without a `status` property: not carried".to_owned(),
        );
    }
    tags.push(format!("+kubegen:plural={}", crd.plural));
    if !crd.singular.is_empty() {
        tags.push(format!("+kubegen:singular={}", crd.singular));
    }
    if !crd.short_names.is_empty() {
        tags.push(format!("+kubegen:shortNames={}", crd.short_names.join(",")));
    }
    if !crd.categories.is_empty() {
        tags.push(format!("+kubegen:categories={}", crd.categories.join(",")));
    }
    if let Some(scale) = &version.scale {
        let mut tag = format!(
            "+kubegen:subresource:scale:specpath={},statuspath={}",
            scale.spec_replicas_path, scale.status_replicas_path
        );
        if let Some(selector) = &scale.label_selector_path {
            let _ = write!(tag, ",selectorpath={selector}");
        }
        tags.push(tag);
    }
    for column in &version.columns {
        match column_tag(column) {
            Some(tag) => tags.push(tag),
            None => problems.warn(
                &place,
                format!("printer column `{}` holds a `,`: not carried", column.name),
            ),
        }
    }
    if crd.versions.len() > 1 && version.storage {
        tags.push("+kubegen:storageversion".to_owned());
    }
    if !crd.list_kind.is_empty() && crd.list_kind != format!("{}List", crd.kind) {
        problems.warn(
            &place,
            format!("listKind `{}` becomes `{}List`", crd.list_kind, crd.kind),
        );
    }
    tags
}

/// `+kubegen:printcolumn:` (values are split at `,`, so one holding a comma cannot be written).
fn column_tag(column: &read::Column) -> Option<String> {
    let mut pairs = vec![
        format!("name={}", column.name),
        format!("type={}", column.type_),
        format!("jsonPath={}", column.json_path),
    ];
    if let Some(description) = &column.description {
        pairs.push(format!("description={}", description.replace('\n', " ")));
    }
    if let Some(format) = &column.format {
        pairs.push(format!("format={format}"));
    }
    if let Some(priority) = column.priority {
        pairs.push(format!("priority={priority}"));
    }
    let values = [&column.name, &column.json_path]
        .into_iter()
        .chain(column.description.as_ref());
    let clean = values.into_iter().all(|value| !value.contains(','));
    clean.then(|| format!("+kubegen:printcolumn:{}", pairs.join(",")))
}
