//! Golden fixtures: each `tests/golden/<case>/apis` is generated and compared byte for byte with
//! `tests/golden/<case>/expected/`. `UPDATE_GOLDEN=1 cargo nextest run -p kubegen-codegen`
//! re-blesses them (review the diff before committing).

use std::path::{Path, PathBuf};

use kubegen_codegen::Config;

fn config(case: &str) -> Config {
    let mut config = Config::default();
    config.root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(case);
    config.builtins = None;
    config.output = PathBuf::from("expected/crates");
    config.crd = Some(PathBuf::from("expected/crd.yaml"));
    config.crd_v1beta1 = Some(PathBuf::from("expected/crd-v1beta1.yaml"));
    config.boilerplate = None;
    config
}

fn golden(case: &str) {
    let config = config(case);
    let files = kubegen_codegen::generate(&config).expect("fixture input is valid");
    let again = kubegen_codegen::generate(&config).expect("fixture input is valid");
    assert_eq!(files, again, "generation is deterministic");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        kubegen_codegen::write(&config, &files).expect("blessing writes");
        return;
    }
    let changes = kubegen_codegen::check(&config, &files);
    assert!(
        changes.is_empty(),
        "golden files of `{case}` differ (UPDATE_GOLDEN=1 re-blesses):\n{}",
        changes.diff
    );
}

#[test]
fn cluster_scoped_kind_has_no_namespace_parameter() {
    golden("cluster_scoped");
}

#[test]
fn enums_well_known_types_json_bytes_list_types_and_cel_rules() {
    golden("operator_types");
}

#[test]
fn no_status_kind_has_no_status_methods_or_subresource() {
    golden("no_status");
}

#[test]
fn readonly_and_skip_verbs_limit_the_typed_client() {
    golden("readonly");
}

#[test]
fn custom_methods_delegate_to_subresource_verbs() {
    golden("custom_method");
}

#[test]
fn irregular_plurals_name_urls_and_accessors() {
    golden("irregular_plural");
}

#[test]
fn hyphenated_group_gets_an_underscore_module() {
    golden("hyphenated_group");
}

#[test]
fn imported_structs_keep_unknown_fields_and_nullable_fields_keep_null() {
    golden("imported");
}
