//! `deploy/crd-v1beta1.yaml`: the CRDs of `crd.yaml` as apiextensions.k8s.io/v1beta1, for API
//! servers older than 1.16, which do not serve apiextensions.k8s.io/v1 (v1beta1 is served from 1.7
//! until 1.21). controller-gen's `crd:crdVersions=v1beta1`, for the same [`Crd`] as the v1 file.
//!
//! # Differences from the v1 layout
//! - `spec.version` names the storage version. The server requires it to equal
//!   `spec.versions[0].name`, so the storage version is listed first, the others follow in v1 order.
//! - The schema (`validation`), `subresources` and `additionalPrinterColumns` sit at the top of
//!   `spec` when every version has the same one, and per version otherwise: the server rejects
//!   per-version values that are all identical, and top-level and per-version values together.
//! - Printer columns spell their path key `JSONPath`, not `jsonPath`.
//! - `preserveUnknownFields: false`: unknown fields are pruned as v1 always does (1.15+, needs the
//!   structural schema kubegen emits). v1beta1 would keep them by default.
//! - No `default`s: defaulting needs 1.16, a 1.15 server rejects them (`default: Forbidden: must
//!   not be set`, the CustomResourceDefaulting gate is alpha and off), and from 1.17 a CRD with
//!   defaults must be created through v1.
//! - No `x-kubernetes-list-type`, `x-kubernetes-list-map-keys`, `x-kubernetes-map-type` or
//!   `x-kubernetes-validations`: they came with 1.16 (validations with 1.23), and a 1.15 server's
//!   validation rejects them as unknown fields. The server then treats such lists as atomic (so
//!   `UniqueItems`, a set, lets duplicates in) and does not evaluate CEL rules.
//!
//! A v1beta1 CRD that silently lost a check would surprise: the file's head comment lists every
//! default and every check removed, and [`warnings`] (printed by `kubegen`) names them too.
//!
//! `x-kubernetes-int-or-string` and `x-kubernetes-preserve-unknown-fields` stay (1.15+). Every other keyword kubegen emits (`type`, `format`,
//! `description`, `properties`, `required`, `items`, `additionalProperties`, `anyOf`, `enum`,
//! `minimum`/`maximum`, `minLength`/`maxLength`, `minItems`/`maxItems`, `pattern`) 1.15 knows.

use std::fmt::Write as _;

use serde_yaml::Value;

use super::crd::{self, Crd, Owner, crds, printer_columns};
use super::ctx::EmitCtx;
use super::schema::{insert, map, remove_defaults, remove_newer_keywords};
use crate::Error;

/// Says what the file is for, under the `@generated` line.
const INTRO: &str = "\
# The CRDs of the apiextensions.k8s.io/v1 manifest as apiextensions.k8s.io/v1beta1, for API servers
# older than 1.16 (and at least 1.15). Newer servers take the v1 manifest.
";

/// The whole v1beta1 multi-document YAML file.
pub(super) fn emit(ctx: &EmitCtx<'_>) -> Result<String, Error> {
    let mut removed = Vec::new();
    let documents: Vec<Value> = crds(ctx, Owner::User)
        .iter()
        .map(|crd| document(crd, &mut removed))
        .collect();
    let mut out = crd::header(ctx);
    out.push_str(INTRO);
    out.push_str(&notes(&removed)?);
    for document in &documents {
        crd::push_document(&mut out, document)?;
    }
    Ok(out)
}

/// What the v1beta1 file leaves out that the v1 file has, one line per default or check.
pub(super) fn warnings(ctx: &EmitCtx<'_>) -> Result<Vec<String>, Error> {
    let mut removed = Vec::new();
    for crd in crds(ctx, Owner::User) {
        document(&crd, &mut removed);
    }
    removed
        .iter()
        .map(|entry| {
            let what = match &entry.what {
                Dropped::Default(value) => format!(
                    "default {} dropped (API servers before 1.16 reject defaults in CRDs)",
                    json(value)?
                ),
                Dropped::Check(what) => format!(
                    "{what} dropped (API servers before 1.16 reject the keyword, so v1beta1 CRDs cannot carry it)"
                ),
            };
            Ok(format!(
                "v1beta1 CRD {} {} {}: {what}",
                entry.crd,
                entry.versions.join(","),
                entry.path
            ))
        })
        .collect()
}

/// Something left out of the file: on which CRD, in which versions, at which field.
struct RemovedFrom {
    /// The CRD's name.
    crd: String,
    /// The versions whose schema had it, in v1 order.
    versions: Vec<String>,
    /// The field, e.g. `.spec.workers`.
    path: String,
    /// The default or check.
    what: Dropped,
}

/// A default value, or a check the server will not make.
#[derive(PartialEq)]
enum Dropped {
    Default(Value),
    Check(String),
}

/// One CRD in the v1beta1 layout; records the defaults it leaves out in `removed`.
fn document(crd: &Crd<'_>, removed: &mut Vec<RemovedFrom>) -> Value {
    // The storage version first (`spec.version` must name versions[0]), then the rest in v1 order.
    let storage = crd.versions.iter().position(|v| v.storage).unwrap_or(0);
    let order: Vec<usize> = std::iter::once(storage)
        .chain((0..crd.versions.len()).filter(|&i| i != storage))
        .collect();
    let mut entries: Vec<Value> = order
        .iter()
        .map(|&i| crd::version_entry(&crd.versions[i]))
        .collect();
    let mut top_level = Vec::new();
    for (top_key, version_key, values) in per_version_settings(crd, removed) {
        match placement(&values) {
            Placement::Nowhere => {}
            Placement::TopLevel(value) => top_level.push((top_key, value.clone())),
            Placement::PerVersion => {
                for (entry, &i) in entries.iter_mut().zip(&order) {
                    if let Some(value) = &values[i] {
                        insert(entry, version_key, value.clone());
                    }
                }
            }
        }
    }
    let mut document = crd::document("apiextensions.k8s.io/v1beta1", crd);
    if let Some(spec) = document.get_mut("spec") {
        insert(spec, "version", Value::from(crd.versions[storage].name));
        insert(spec, "versions", Value::Sequence(entries));
        for (key, value) in top_level {
            insert(spec, key, value);
        }
        // Pruning needs a schema for every version; a kind always has one (its struct).
        if crd.versions.iter().all(|version| version.schema.is_some()) {
            insert(spec, "preserveUnknownFields", Value::Bool(false));
        }
        // v1beta1 keeps the webhook's settings beside `strategy` (`webhookClientConfig`).
        if let Some(service) = &crd.conversion_service {
            let conversion = map([
                ("strategy", Value::from("Webhook")),
                ("webhookClientConfig", map([("service", service.clone())])),
                ("conversionReviewVersions", crd::review_versions()),
            ]);
            insert(spec, "conversion", conversion);
        }
    }
    document
}

/// Per setting, its top-level key, its per-version key and each version's value (v1 order):
/// the schema without defaults, the status subresource, the printer columns.
fn per_version_settings(
    crd: &Crd<'_>,
    removed: &mut Vec<RemovedFrom>,
) -> [(&'static str, &'static str, Vec<Option<Value>>); 3] {
    let mut schemas = Vec::new();
    for version in &crd.versions {
        let schema = version.schema.clone().map(|mut schema| {
            for default in remove_defaults(&mut schema) {
                let what = Dropped::Default(default.value);
                record(removed, &crd.name, version.name, default.path, what);
            }
            for check in remove_newer_keywords(&mut schema) {
                let what = Dropped::Check(check.what);
                record(removed, &crd.name, version.name, check.path, what);
            }
            map([("openAPIV3Schema", schema)])
        });
        schemas.push(schema);
    }
    let subresources = crd.versions.iter().map(crd::subresources);
    let columns = crd.versions.iter().map(|version| {
        (!version.columns.is_empty()).then(|| printer_columns(version.columns, "JSONPath"))
    });
    [
        ("validation", "schema", schemas),
        ("subresources", "subresources", subresources.collect()),
        (
            "additionalPrinterColumns",
            "additionalPrinterColumns",
            columns.collect(),
        ),
    ]
}

/// Adds `what` at `path` to `removed`, merging it with the same one of another version of `crd`.
fn record(removed: &mut Vec<RemovedFrom>, crd: &str, version: &str, path: String, what: Dropped) {
    match removed
        .iter_mut()
        .find(|seen| seen.crd == crd && seen.path == path && seen.what == what)
    {
        Some(seen) => seen.versions.push(version.to_owned()),
        None => removed.push(RemovedFrom {
            crd: crd.to_owned(),
            versions: vec![version.to_owned()],
            path,
            what,
        }),
    }
}

/// Where a per-version setting goes in the v1beta1 layout.
#[derive(Debug, PartialEq)]
enum Placement<'a> {
    /// No version has it.
    Nowhere,
    /// Every version has this same value: `spec.<key>`.
    TopLevel(&'a Value),
    /// Versions differ: `spec.versions[].<key>`, on the versions that have one.
    PerVersion,
}

fn placement(values: &[Option<Value>]) -> Placement<'_> {
    match values.first() {
        Some(Some(first)) if values.iter().all(|value| value.as_ref() == Some(first)) => {
            Placement::TopLevel(first)
        }
        _ if values.iter().all(Option::is_none) => Placement::Nowhere,
        _ => Placement::PerVersion,
    }
}

/// The head comment listing the defaults and checks left out; empty when there were none.
fn notes(removed: &[RemovedFrom]) -> Result<String, Error> {
    let mut note = String::new();
    let defaults = removed.iter().filter_map(|entry| match &entry.what {
        Dropped::Default(value) => Some((entry, value)),
        Dropped::Check(_) => None,
    });
    for (index, (entry, value)) in defaults.enumerate() {
        if index == 0 {
            note.push_str(
                "# API servers before 1.16 do not apply defaults, so this file has none. Set these fields\n\
                 # yourself on such servers (CRD, versions, field: default):\n",
            );
        }
        let _ = writeln!(
            note,
            "#   {} {} {}: {}",
            entry.crd,
            entry.versions.join(","),
            entry.path,
            json(value)?
        );
    }
    let checks = removed.iter().filter_map(|entry| match &entry.what {
        Dropped::Check(what) => Some((entry, what)),
        Dropped::Default(_) => None,
    });
    for (index, (entry, what)) in checks.enumerate() {
        if index == 0 {
            note.push_str(
                "# API servers before 1.16 do not know these checks, so this file has none. A controller\n\
                 # must not rely on them there (CRD, versions, field: check):\n",
            );
        }
        let _ = writeln!(
            note,
            "#   {} {} {}: {what}",
            entry.crd,
            entry.versions.join(","),
            entry.path
        );
    }
    Ok(note)
}

fn json(value: &Value) -> Result<String, Error> {
    serde_json::to_string(value)
        .map_err(|error| Error::Internal(format!("default does not serialize: {error}")))
}

#[cfg(test)]
mod tests {
    use serde::Deserialize as _;

    use super::*;
    use crate::config::Config;

    /// Generates (v1 file, v1beta1 file) from `files` (paths under `apis/`).
    fn generate(files: &[(&str, &str)]) -> (String, String) {
        let dir = tempfile::tempdir().expect("temp dir");
        for (path, text) in files {
            let full = dir.path().join("apis").join(path);
            std::fs::create_dir_all(full.parent().expect("has a parent")).expect("mkdir");
            std::fs::write(full, text).expect("write");
        }
        let config = Config {
            root: dir.path().to_path_buf(),
            builtins: None,
            boilerplate: None,
            ..Config::default()
        };
        let model = crate::load_model(&config).expect("test input is valid");
        let ctx = EmitCtx {
            config: &config,
            model: &model,
            boilerplate: String::new(),
        };
        let v1 = crd::emit(&ctx, Owner::User).expect("v1 emits");
        let v1beta1 = emit(&ctx).expect("v1beta1 emits");
        assert_eq!(v1beta1, emit(&ctx).expect("v1beta1 emits"), "deterministic");
        (v1, v1beta1)
    }

    fn documents(text: &str) -> Vec<Value> {
        serde_yaml::Deserializer::from_str(text)
            .map(|document| Value::deserialize(document).expect("valid YAML"))
            .collect()
    }

    /// The only document of a one-CRD file.
    fn only(text: &str) -> Value {
        let mut documents = documents(text);
        assert_eq!(documents.len(), 1);
        documents.remove(0)
    }

    fn yaml(text: &str) -> Value {
        serde_yaml::from_str(text).expect("test YAML parses")
    }

    const GROUP: &str = "//! +groupName=fleet.example.com\nmod ship;\n";

    /// A kind with a status subresource, two printer columns and a defaulted field.
    const SHIP: &str = "\
/// A ship.
///
/// +genclient
/// +kubegen:storageversion
/// +kubegen:printcolumn:name=Crew,type=integer,jsonPath=.spec.crew
/// +kubegen:printcolumn:name=Port,type=string,jsonPath=.status.port,priority=1
pub struct Ship {
    pub metadata: ObjectMeta,
    /// Wanted.
    pub spec: ShipSpec,
    /// Observed.
    pub status: Option<ShipStatus>,
}

/// Wanted.
pub struct ShipSpec {
    /// Crew size.
    /// +kubegen:default=3
    pub crew: i32,
    /// Cargo hold.
    pub hold: Option<IntOrString>,
}

/// Observed.
pub struct ShipStatus {
    /// Where it is.
    pub port: Option<String>,
}
";

    /// An older version of the same kind: another schema, no status, no columns.
    const SHIP_V1ALPHA1: &str = "\
/// A ship.
///
/// +genclient
pub struct Ship {
    pub metadata: ObjectMeta,
    /// Wanted.
    pub spec: ShipSpec,
}

/// Wanted.
pub struct ShipSpec {
    /// Crew size.
    /// +kubegen:default=3
    pub crew: i32,
}
";

    fn one_version() -> (String, String) {
        generate(&[("fleet/v1/mod.rs", GROUP), ("fleet/v1/ship.rs", SHIP)])
    }

    /// v1alpha1 and v1beta1: the storage version (v1beta1) comes second in package order.
    fn two_versions() -> (String, String) {
        generate(&[
            ("fleet/v1alpha1/mod.rs", GROUP),
            ("fleet/v1alpha1/ship.rs", SHIP_V1ALPHA1),
            ("fleet/v1beta1/mod.rs", GROUP),
            ("fleet/v1beta1/ship.rs", SHIP),
        ])
    }

    #[test]
    fn metadata_names_scope_and_group_match_the_v1_file() {
        let (v1, v1beta1) = two_versions();
        let (v1, v1beta1) = (only(&v1), only(&v1beta1));
        assert_eq!(v1beta1["apiVersion"], "apiextensions.k8s.io/v1beta1");
        assert_eq!(v1beta1["kind"], "CustomResourceDefinition");
        assert_eq!(v1beta1["metadata"], v1["metadata"]);
        for key in ["group", "names", "scope"] {
            assert_eq!(v1beta1["spec"][key], v1["spec"][key], "spec.{key}");
        }
    }

    #[test]
    fn storage_version_is_spec_version_and_listed_first() {
        let (v1, v1beta1) = two_versions();
        let v1_versions = &only(&v1)["spec"]["versions"];
        assert_eq!(v1_versions[0]["name"], "v1alpha1", "v1 keeps package order");
        let spec = &only(&v1beta1)["spec"];
        assert_eq!(spec["version"], "v1beta1");
        let flags: Vec<Value> = spec["versions"]
            .as_sequence()
            .expect("versions is a list")
            .iter()
            .map(|entry| {
                let flag = |key: &str| entry[key].clone();
                map([
                    ("name", flag("name")),
                    ("served", flag("served")),
                    ("storage", flag("storage")),
                ])
            })
            .collect();
        assert_eq!(
            Value::Sequence(flags),
            yaml(
                "[{name: v1beta1, served: true, storage: true},
                  {name: v1alpha1, served: true, storage: false}]"
            )
        );
    }

    #[test]
    fn shared_schema_status_and_columns_sit_at_the_top_level() {
        let (v1_text, v1beta1_text) = one_version();
        let (v1, v1beta1) = (only(&v1_text), only(&v1beta1_text));
        let spec = &v1beta1["spec"];
        let entry = &spec["versions"][0];
        assert_eq!(entry, &yaml("{name: v1, served: true, storage: true}"));
        let mut schema = v1["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone();
        remove_defaults(&mut schema);
        assert_eq!(spec["validation"]["openAPIV3Schema"], schema);
        assert_eq!(spec["subresources"], yaml("{status: {}}"));
        assert_eq!(
            spec["additionalPrinterColumns"],
            yaml(
                "[{name: Crew, type: integer, JSONPath: .spec.crew},
                  {name: Port, type: string, JSONPath: .status.port, priority: 1}]"
            )
        );
        assert!(!v1beta1_text.contains("jsonPath"), "{v1beta1_text}");
    }

    #[test]
    fn differing_versions_keep_schema_status_and_columns_per_version() {
        let (v1, v1beta1) = two_versions();
        let (v1, v1beta1) = (only(&v1), only(&v1beta1));
        let spec = &v1beta1["spec"];
        for key in ["validation", "subresources", "additionalPrinterColumns"] {
            assert_eq!(spec.get(key), None, "no top-level {key}");
        }
        let (beta, alpha) = (&spec["versions"][0], &spec["versions"][1]);
        let mut beta_schema = v1["spec"]["versions"][1]["schema"].clone();
        remove_defaults(&mut beta_schema["openAPIV3Schema"]);
        assert_eq!(beta["schema"], beta_schema);
        assert_eq!(beta["subresources"], yaml("{status: {}}"));
        assert_eq!(
            beta["additionalPrinterColumns"][0]["JSONPath"],
            ".spec.crew"
        );
        assert!(alpha["schema"]["openAPIV3Schema"]["properties"]["spec"].is_mapping());
        assert_eq!(alpha.get("subresources"), None);
        assert_eq!(alpha.get("additionalPrinterColumns"), None);
    }

    #[test]
    fn versions_differing_only_in_defaults_share_the_top_level_schema() {
        let without_default = SHIP
            .replace("    /// +kubegen:default=3\n", "")
            .replace("/// +kubegen:storageversion\n", "");
        let (_, v1beta1) = generate(&[
            ("fleet/v1beta1/mod.rs", GROUP),
            ("fleet/v1beta1/ship.rs", &without_default),
            ("fleet/v1/mod.rs", GROUP),
            ("fleet/v1/ship.rs", SHIP),
        ]);
        let spec = &only(&v1beta1)["spec"];
        assert!(spec["validation"]["openAPIV3Schema"].is_mapping());
        assert_eq!(spec["subresources"], yaml("{status: {}}"));
        assert_eq!(spec["versions"][0].get("schema"), None);
        assert_eq!(spec["versions"][1].get("schema"), None);
    }

    #[test]
    fn several_versions_convert_through_the_configured_webhook_service() {
        let (v1, v1beta1) = two_versions();
        let service =
            yaml("{namespace: kubegen-system, name: kubegen-webhook, path: /convert, port: 443}");
        assert_eq!(
            only(&v1)["spec"]["conversion"],
            yaml(
                "{strategy: Webhook, webhook: {conversionReviewVersions: [v1, v1beta1], clientConfig: {service: {namespace: kubegen-system, name: kubegen-webhook, path: /convert, port: 443}}}}"
            )
        );
        let conversion = &only(&v1beta1)["spec"]["conversion"];
        assert_eq!(conversion["strategy"], "Webhook");
        assert_eq!(conversion["webhookClientConfig"]["service"], service);
        assert_eq!(
            conversion["conversionReviewVersions"],
            yaml("[v1, v1beta1]")
        );
        let (v1, v1beta1) = one_version();
        assert_eq!(only(&v1)["spec"].get("conversion"), None);
        assert_eq!(only(&v1beta1)["spec"].get("conversion"), None);
    }

    #[test]
    fn unknown_fields_are_pruned() {
        let (_, v1beta1) = one_version();
        assert_eq!(
            only(&v1beta1)["spec"]["preserveUnknownFields"],
            Value::Bool(false)
        );
    }

    #[test]
    fn defaults_are_removed_and_listed_in_the_head_comment() {
        let (v1, v1beta1) = two_versions();
        assert!(v1.contains("default: 3"), "v1 keeps defaults");
        assert!(!v1beta1.contains("default:"), "{v1beta1}");
        let head: Vec<&str> = v1beta1.lines().take_while(|l| *l != "---").collect();
        let generated = format!("# {}", crate::generated::header("apis"));
        assert_eq!(
            head,
            [
                generated.as_str(),
                "# The CRDs of the apiextensions.k8s.io/v1 manifest as apiextensions.k8s.io/v1beta1, for API servers",
                "# older than 1.16 (and at least 1.15). Newer servers take the v1 manifest.",
                "# API servers before 1.16 do not apply defaults, so this file has none. Set these fields",
                "# yourself on such servers (CRD, versions, field: default):",
                "#   ships.fleet.example.com v1alpha1,v1beta1 .spec.crew: 3",
            ]
        );
    }

    #[test]
    fn dropped_cel_rules_and_unique_items_are_listed_and_warned_about() {
        let ship = SHIP.replace(
            "    /// Cargo hold.\n",
            "    /// +kubegen:validation:XValidation:rule=\"self >= oldSelf\",message=\"no\"\n    pub decks: i32,\n\
             /// +kubegen:optional\n    /// +kubegen:validation:UniqueItems=true\n    pub flags: Vec<String>,\n    /// Cargo hold.\n",
        );
        let files = [
            ("fleet/v1/mod.rs", GROUP),
            ("fleet/v1/ship.rs", ship.as_str()),
        ];
        let (_, v1beta1) = generate(&files);
        let body = v1beta1.split_once("\n---\n").map_or("", |(_, body)| body);
        assert!(body.contains("decks:"), "{body}");
        for keyword in ["x-kubernetes-validations", "x-kubernetes-list-type"] {
            assert!(!body.contains(keyword), "{body}");
        }
        let head: Vec<&str> = v1beta1
            .lines()
            .take_while(|l| *l != "---")
            .skip(5)
            .collect();
        assert_eq!(
            head,
            [
                "#   ships.fleet.example.com v1 .spec.crew: 3",
                "# API servers before 1.16 do not know these checks, so this file has none. A controller",
                "# must not rely on them there (CRD, versions, field: check):",
                "#   ships.fleet.example.com v1 .spec.decks: CEL rule `self >= oldSelf`",
                "#   ships.fleet.example.com v1 .spec.flags: no duplicates (`x-kubernetes-list-type: set`)",
            ]
        );
        let dir = tempfile::tempdir().expect("temp dir");
        for (path, text) in files {
            let full = dir.path().join("apis").join(path);
            std::fs::create_dir_all(full.parent().expect("has a parent")).expect("mkdir");
            std::fs::write(full, text).expect("write");
        }
        let config = Config {
            root: dir.path().to_path_buf(),
            builtins: None,
            boilerplate: None,
            crd_v1beta1: Some("crd-v1beta1.yaml".into()),
            ..Config::default()
        };
        assert_eq!(
            crate::warnings(&config).expect("valid input"),
            [
                "v1beta1 CRD ships.fleet.example.com v1 .spec.crew: default 3 dropped (API servers before 1.16 reject defaults in CRDs)",
                "v1beta1 CRD ships.fleet.example.com v1 .spec.decks: CEL rule `self >= oldSelf` dropped (API servers before 1.16 reject the keyword, so v1beta1 CRDs cannot carry it)",
                "v1beta1 CRD ships.fleet.example.com v1 .spec.flags: no duplicates (`x-kubernetes-list-type: set`) dropped (API servers before 1.16 reject the keyword, so v1beta1 CRDs cannot carry it)",
            ]
        );
    }

    #[test]
    fn without_defaults_the_head_comment_lists_none() {
        let plain = SHIP.replace("    /// +kubegen:default=3\n", "");
        let (_, v1beta1) = generate(&[("fleet/v1/mod.rs", GROUP), ("fleet/v1/ship.rs", &plain)]);
        assert!(!v1beta1.contains("do not apply defaults"), "{v1beta1}");
    }

    #[test]
    fn int_or_string_is_kept() {
        let (_, v1beta1) = one_version();
        let schema = &only(&v1beta1)["spec"]["validation"]["openAPIV3Schema"];
        let hold = &schema["properties"]["spec"]["properties"]["hold"];
        assert_eq!(hold["x-kubernetes-int-or-string"], Value::Bool(true));
        assert_eq!(hold["anyOf"], yaml("[{type: integer}, {type: string}]"));
    }

    #[test]
    fn placement_follows_the_identical_per_version_rule() {
        let a = Some(Value::from("a"));
        let b = Some(Value::from("b"));
        assert_eq!(placement(&[None, None]), Placement::Nowhere);
        assert_eq!(
            placement(&[a.clone(), a.clone()]),
            Placement::TopLevel(&Value::from("a"))
        );
        assert_eq!(placement(&[a.clone(), b]), Placement::PerVersion);
        assert_eq!(placement(&[a, None]), Placement::PerVersion);
    }
}
