//! `kubegen import`: the golden output for a hand-written CRD set covering every shape, and the
//! round trip CRD -> `apis/` -> CRD on it and on real projects' CRDs (`tests/import/testdata`,
//! each folder with its project's license and source commit): the regenerated schema of every
//! served version equals the input's, key order, `required` order and description whitespace
//! aside. `UPDATE_GOLDEN=1` re-blesses the golden files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kubegen_codegen::Config;
use serde_json::Value;

fn dir(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/import")
        .join(path)
}

/// A config rooted at `root`, generating into `crates/`, the user's CRDs into `crd.yaml` and the
/// imported ones into `imported.yaml`.
fn config(root: &Path) -> Config {
    let mut config = Config::default();
    config.root = root.to_path_buf();
    config.builtins = None;
    config.output = PathBuf::from("crates");
    config.crd = Some(PathBuf::from("crd.yaml"));
    config.import.crd = Some(PathBuf::from("imported.yaml"));
    config
}

/// Imports `inputs` into a temporary project, generates it, and returns the project (kept alive
/// by the `TempDir`) with the generated CRD text of the imported kinds. The user's own manifest
/// holds none of them: the project that owns a CRD installs it.
fn import_and_generate(
    inputs: &[PathBuf],
    max_depth: Option<usize>,
) -> (tempfile::TempDir, String) {
    let root = tempfile::tempdir().expect("temp dir");
    let mut config = config(root.path());
    if let Some(depth) = max_depth {
        config.import.max_depth = depth;
    }
    let imported = kubegen_codegen::import(&config, inputs).expect("the CRDs import");
    for (path, text) in &imported.files {
        let full = root.path().join(path);
        std::fs::create_dir_all(full.parent().expect("file in a dir")).expect("mkdir");
        std::fs::write(full, text).expect("write");
    }
    let files = kubegen_codegen::generate(&config).expect("the imported packages generate");
    let own = files
        .get(Path::new("crd.yaml"))
        .expect("the user's CRD manifest");
    assert!(
        !own.contains("kind: CustomResourceDefinition"),
        "imported CRDs leaked into the user's manifest:\n{own}"
    );
    let crd = files
        .get(Path::new("imported.yaml"))
        .cloned()
        .expect("the imported CRDs' manifest");
    assert!(
        !crd.contains("clientConfig"),
        "an imported CRD names the user's conversion webhook:\n{crd}"
    );
    (root, crd)
}

/// `(CRD name, version) -> {schema: openAPIV3Schema, subresources}` of every served version in
/// the YAML documents.
fn schemas(texts: &[String]) -> BTreeMap<(String, String), Value> {
    let mut out = BTreeMap::new();
    for text in texts {
        for document in serde_yaml::Deserializer::from_str(text) {
            let value: Value = serde::Deserialize::deserialize(document).expect("YAML");
            if value["kind"] != "CustomResourceDefinition" {
                continue;
            }
            let name = value["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let shared = value["spec"]
                .pointer("/validation/openAPIV3Schema")
                .cloned();
            let shared_subresources = value["spec"].get("subresources").cloned();
            let mut versions = value["spec"]["versions"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if versions.is_empty() {
                versions.push(serde_json::json!({"name": value["spec"]["version"]}));
            }
            for version in versions {
                if version["served"] == false {
                    continue;
                }
                let schema = version
                    .pointer("/schema/openAPIV3Schema")
                    .cloned()
                    .or_else(|| shared.clone())
                    .unwrap_or(Value::Null);
                let key = (
                    name.clone(),
                    version["name"].as_str().unwrap_or_default().to_owned(),
                );
                let subresources = version
                    .get("subresources")
                    .cloned()
                    .or_else(|| shared_subresources.clone())
                    // `subresources: {}` (Argo, Gateway's experimental ReferenceGrant) is none.
                    .filter(|value| value.as_object().is_none_or(|map| !map.is_empty()))
                    .unwrap_or(Value::Null);
                out.insert(
                    key,
                    serde_json::json!({"schema": normalize(&schema), "subresources": subresources}),
                );
            }
        }
    }
    out
}

/// Descriptions with whitespace collapsed, `required` sorted (a set for the server).
fn normalize(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| {
                    let value = match (key.as_str(), value) {
                        ("description", Value::String(text)) => {
                            Value::from(text.split_whitespace().collect::<Vec<_>>().join(" "))
                        }
                        ("required", Value::Array(items)) => {
                            let mut items = items.clone();
                            items.sort_by_key(ToString::to_string);
                            Value::Array(items)
                        }
                        _ => normalize(value),
                    };
                    (key.clone(), value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        other => other.clone(),
    }
}

/// Every path where `a` and `b` differ.
fn differences(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(left), Value::Object(right)) => {
            for key in left
                .keys()
                .chain(right.keys().filter(|k| !left.contains_key(*k)))
            {
                let at = format!("{path}.{key}");
                match (left.get(key), right.get(key)) {
                    (Some(l), Some(r)) => differences(l, r, &at, out),
                    (Some(l), None) => out.push(format!("{at}: only in the input: {l}")),
                    (None, Some(r)) => out.push(format!("{at}: only in the output: {r}")),
                    (None, None) => {}
                }
            }
        }
        _ if a != b => out.push(format!("{path}: input {a}, output {b}")),
        _ => {}
    }
}

/// Imports `inputs`, regenerates, and asserts every served version's schema came back.
fn assert_round_trip(inputs: &[PathBuf], max_depth: Option<usize>) -> usize {
    let (_root, crd) = import_and_generate(inputs, max_depth);
    let mut texts = Vec::new();
    for input in inputs {
        let files: Vec<PathBuf> = if input.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(input)
                .expect("testdata dir")
                .map(|entry| entry.expect("entry").path())
                .filter(|path| path.extension().is_some_and(|ext| ext == "yaml"))
                .collect();
            files.sort();
            files
        } else {
            vec![input.clone()]
        };
        for file in files {
            texts.push(std::fs::read_to_string(file).expect("read"));
        }
    }
    let expected = schemas(&texts);
    let actual = schemas(&[crd]);
    let mut problems = Vec::new();
    for (key, schema) in &expected {
        match actual.get(key) {
            Some(regenerated) => {
                let mut found = Vec::new();
                differences(schema, regenerated, "", &mut found);
                problems.extend(found.into_iter().map(|d| format!("{key:?} {d}")));
            }
            None => problems.push(format!("{key:?} was not regenerated")),
        }
    }
    assert!(
        problems.is_empty(),
        "{} differences:\n{}",
        problems.len(),
        problems.join("\n")
    );
    expected.len()
}

#[test]
fn import_of_every_shape_matches_the_golden_packages() {
    let root = tempfile::tempdir().expect("temp dir");
    let mut config = config(root.path());
    config.import.max_depth = 4;
    config
        .import
        .rename
        .insert("Widget.spec.ports".to_owned(), "Port".to_owned());
    let imported = kubegen_codegen::import(&config, &[dir("shapes/crds.yaml")]).expect("imports");
    let again = kubegen_codegen::import(&config, &[dir("shapes/crds.yaml")]).expect("imports");
    assert_eq!(imported.files, again.files, "the import is deterministic");
    let expected = dir("shapes/expected");
    for (path, text) in &imported.files {
        let golden = expected.join(path);
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::create_dir_all(golden.parent().expect("dir")).expect("mkdir");
            std::fs::write(&golden, text).expect("bless");
            continue;
        }
        let want = std::fs::read_to_string(&golden).unwrap_or_default();
        assert_eq!(
            &want,
            text,
            "{} differs (UPDATE_GOLDEN=1 re-blesses)",
            golden.display()
        );
    }
    let warnings = imported.warnings.join("\n");
    assert!(
        !warnings.contains("scale"),
        "the scale subresource is carried: {warnings}"
    );
    assert!(
        warnings.contains("at .spec.deep.a.b.c: deeper than 4 levels"),
        "{warnings}"
    );
}

#[test]
fn every_shape_round_trips_to_an_equal_schema() {
    assert_eq!(assert_round_trip(&[dir("shapes/crds.yaml")], Some(4)), 3);
}

#[test]
fn a_malformed_crd_is_an_error_naming_file_crd_and_version() {
    let root = tempfile::tempdir().expect("temp dir");
    let text = "kind: CustomResourceDefinition\nmetadata: {name: bad.x.io}\nspec:\n  group: x.io\n  names: {kind: Bad, plural: bad}\n  versions:\n  - {name: v1, served: true, schema: {openAPIV3Schema: {type: object, properties: {spec: {type: tuple}}}}}\n";
    let error = kubegen_codegen::import_text(&config(root.path()), "bad.yaml", text)
        .expect_err("an unknown type is refused");
    assert_eq!(
        error.to_string(),
        "1 problem(s) in the CRDs:\nbad.yaml#1 (CRD bad.x.io), version v1, at .spec: unknown schema type `tuple`"
    );
}

#[test]
fn gateway_api_standard_schemas_round_trip() {
    assert_eq!(
        assert_round_trip(&[dir("testdata/gateway-api/standard")], None),
        14
    );
}

#[test]
fn gateway_api_experimental_schemas_round_trip() {
    assert_eq!(
        assert_round_trip(&[dir("testdata/gateway-api/experimental")], None),
        22
    );
}

#[test]
fn prometheus_operator_schemas_round_trip() {
    assert_eq!(
        assert_round_trip(
            &[dir(
                "testdata/prometheus-operator/prometheus-operator-crd-full"
            )],
            None
        ),
        11
    );
}

#[test]
fn istio_schemas_round_trip() {
    assert_eq!(
        assert_round_trip(&[dir("testdata/istio/crd-all.gen.yaml")], None),
        33
    );
}

#[test]
fn argo_workflows_schema_round_trips() {
    assert_eq!(
        assert_round_trip(
            &[dir("testdata/argo-workflows/argoproj.io_workflows.yaml")],
            None
        ),
        1
    );
}
