use serde::Deserialize as _;

use super::*;
use crate::runtime::{GitReference, GitSource};

fn options(dir: &Path) -> InitOptions {
    InitOptions {
        dir: dir.to_path_buf(),
        name: Some("hello-operator".to_owned()),
        group: "greetings.example.com".to_owned(),
        version: "v1".to_owned(),
        kind: "Greeting".to_owned(),
        cluster_scoped: false,
        runtime: Runtime::Git(GitSource {
            url: "https://example.com/kubegen.git".to_owned(),
            reference: Some(GitReference::Tag("v0.1.0".to_owned())),
        }),
    }
}

/// The `{{key}}` placeholders of `text`.
fn placeholders(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        // `{{{kind}}` is a literal `{` before a placeholder.
        let after = after.trim_start_matches('{');
        let end = after.find("}}").expect("placeholder closes");
        found.push(&after[..end]);
        rest = &after[end + 2..];
    }
    found
}

/// The filled file is valid Rust, TOML or YAML by its extension.
fn parses(path: &str, text: &str) {
    if path.ends_with(".rs") {
        if let Err(error) = syn::parse_file(text) {
            panic!("{path} is not valid Rust: {error}\n{text}");
        }
    } else if path.ends_with(".toml") {
        if let Err(error) = toml::from_str::<toml::Table>(text) {
            panic!("{path} is not valid TOML: {error}\n{text}");
        }
    } else if path.ends_with(".yaml") {
        for document in serde_yaml::Deserializer::from_str(text) {
            if let Err(error) = serde_yaml::Value::deserialize(document) {
                panic!("{path} is not valid YAML: {error}\n{text}");
            }
        }
    }
}

#[test]
fn every_placeholder_of_every_template_has_a_value_and_every_value_is_used() {
    let dir = tempfile::tempdir().expect("temp dir");
    let values = values(&options(&dir.path().join("new"))).expect("valid options");
    let mut used = std::collections::BTreeSet::new();
    for template in &TEMPLATES {
        for text in [template.path, template.text] {
            for key in placeholders(text) {
                assert!(
                    values.iter().any(|(k, _)| *k == key),
                    "{}: `{{{{{key}}}}}` has no value",
                    template.path
                );
                used.insert(key);
            }
            let filled = fill(text, &values);
            assert!(
                !filled.contains("{{"),
                "{}: unfilled\n{filled}",
                template.path
            );
        }
        parses(template.path, &fill(template.text, &values));
    }
    let unused: Vec<&str> = values
        .iter()
        .map(|(key, _)| *key)
        .filter(|key| !used.contains(key))
        .collect();
    assert!(unused.is_empty(), "values no template uses: {unused:?}");
}

#[test]
fn init_refuses_a_non_empty_directory() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("notes.txt"), "mine\n").expect("write");
    let error = init(&options(dir.path())).expect_err("not empty");
    assert!(matches!(error, Error::InitNotEmpty { .. }), "{error}");
    assert!(error.to_string().contains("is not empty"), "{error}");
    let entries = std::fs::read_dir(dir.path()).expect("readable").count();
    assert_eq!(entries, 1, "nothing was written");
}

#[test]
fn init_fills_names_from_group_version_and_kind() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scaffold = init(&options(dir.path())).expect("scaffolds");
    assert_eq!(scaffold.name, "hello-operator");
    assert!(
        scaffold
            .files
            .contains(&PathBuf::from("apis/greetings/v1/greeting.rs"))
    );
    assert!(
        scaffold
            .files
            .contains(&PathBuf::from("operator/tests/greeting.rs"))
    );
    let read = |path: &str| std::fs::read_to_string(dir.path().join(path)).expect("written");
    let lib = read("operator/src/lib.rs");
    assert!(
        lib.contains("greetings_informers::SharedInformerFactory::from"),
        "{lib}"
    );
    assert!(
        lib.contains("informers.greetings_v1().greetings()"),
        "{lib}"
    );
    assert!(
        lib.contains(".greetings_v1().greetings(namespace)"),
        "{lib}"
    );
    let rbac = read("deploy/rbac.yaml");
    assert!(rbac.contains("resources: [\"greetings/status\"]"), "{rbac}");
    let manifest = read("operator/Cargo.toml");
    let tag = "git = \"https://example.com/kubegen.git\", tag = \"v0.1.0\"";
    assert!(
        manifest.contains(&format!("kubegen-runtime = {{ {tag} }}")),
        "{manifest}"
    );
    let dev = manifest
        .split("[dev-dependencies]")
        .nth(1)
        .expect("dev section");
    assert!(dev.contains("kubegen-testserver"), "{manifest}");
    assert!(
        !manifest
            .split("[dev-dependencies]")
            .next()
            .expect("head")
            .contains("testserver"),
        "the test server is a dev-dependency only"
    );
    assert!(read("kubegen.toml").contains(&format!("runtime = {{ {tag} }}")));
}

#[test]
fn a_cluster_scoped_kind_has_no_namespace_anywhere() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cluster = InitOptions {
        cluster_scoped: true,
        ..options(dir.path())
    };
    init(&cluster).expect("scaffolds");
    let read = |path: &str| std::fs::read_to_string(dir.path().join(path)).expect("written");
    assert!(
        read("apis/greetings/v1/greeting.rs")
            .contains("/// +genclient\n/// +genclient:nonNamespaced\n")
    );
    let lib = read("operator/src/lib.rs");
    assert!(lib.contains(".greetings_v1().greetings();"), "{lib}");
    assert!(!lib.contains("let namespace"), "{lib}");
    assert!(read("operator/tests/greeting.rs").contains(".greetings_v1().greetings();"));
}

#[test]
fn a_runtime_path_is_written_relative_even_when_given_absolute() {
    let dir = tempfile::tempdir().expect("temp dir");
    let repo = dir.path().join("work/hello");
    let kubegen = dir.path().join("src/kubegen/crates");
    let with_path = InitOptions {
        runtime: Runtime::Path(kubegen),
        ..options(&repo)
    };
    init(&with_path).expect("scaffolds");
    let read = |path: &str| std::fs::read_to_string(repo.join(path)).expect("written");
    assert!(read("kubegen.toml").contains("runtime = \"path:../../src/kubegen/crates\""));
    let manifest = read("operator/Cargo.toml");
    assert!(
        manifest.contains("kubegen-client = { path = \"../../../src/kubegen/crates/client\" }"),
        "{manifest}"
    );
}

#[test]
fn invalid_options_are_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cases = [
        (
            "group",
            InitOptions {
                group: "greetings".to_owned(),
                ..options(dir.path())
            },
        ),
        (
            "version",
            InitOptions {
                version: "1".to_owned(),
                ..options(dir.path())
            },
        ),
        (
            "kind",
            InitOptions {
                kind: "greeting".to_owned(),
                ..options(dir.path())
            },
        ),
        (
            "name",
            InitOptions {
                name: Some("Hello_Op".to_owned()),
                ..options(dir.path())
            },
        ),
    ];
    for (option, bad_options) in cases {
        let error = init(&bad_options).expect_err("invalid");
        assert!(
            matches!(&error, Error::InitOption { option: named, .. } if *named == option),
            "{option}: {error}"
        );
    }
    for version in ["v1", "v1beta1", "v2alpha3"] {
        assert!(check_version(version).is_ok(), "{version}");
    }
    for version in ["v0", "v1gamma1", "v1beta", "v01"] {
        assert!(check_version(version).is_err(), "{version}");
    }
}
