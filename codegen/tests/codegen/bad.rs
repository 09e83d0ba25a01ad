//! Bad-input corpus: each `tests/bad/<case>/apis` must be rejected with exactly the messages in
//! `tests/bad/<case>/expected.txt` (all problems of the run, sorted by file and line), and the
//! binary must exit non-zero without writing anything. `UPDATE_GOLDEN=1` re-blesses the texts.

use std::path::{Path, PathBuf};
use std::process::Command;

use kubegen_codegen::{Config, Error};

fn case_dir(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/bad")
        .join(case)
}

fn rejected(case: &str) {
    let mut config = Config::default();
    config.root = case_dir(case);
    config.builtins = None;
    config.boilerplate = None;
    let error = match kubegen_codegen::generate(&config) {
        Err(error @ Error::Invalid(_)) => error,
        other => panic!("`{case}` must be rejected as invalid, got {other:?}"),
    };
    let text = format!("{error}\n");
    let expected_path = case_dir(case).join("expected.txt");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&expected_path, &text).expect("blessing writes");
        return;
    }
    let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
    assert_eq!(
        text, expected,
        "messages of `{case}` (UPDATE_GOLDEN=1 re-blesses)"
    );
}

#[test]
fn unknown_tag_is_named_with_its_line() {
    rejected("unknown_tag");
}

#[test]
fn only_verbs_and_skip_verbs_conflict() {
    rejected("conflicting_verbs");
}

#[test]
fn update_status_needs_a_status_field() {
    rejected("status_without_status_field");
}

#[test]
fn kind_without_metadata_is_rejected() {
    rejected("missing_metadata");
}

#[test]
fn unsupported_field_types_get_a_hint() {
    rejected("unsupported_field_type");
}

#[test]
fn duplicate_plural_in_one_group_version_is_rejected() {
    rejected("duplicate_plural");
}

#[test]
fn reserved_group_name_is_rejected() {
    rejected("bad_group_name");
}

#[test]
fn every_problem_of_a_run_is_reported_at_once() {
    rejected("many_problems");
}

#[test]
fn binary_exits_non_zero_and_writes_nothing() {
    let dir = case_dir("many_problems");
    let out = tempfile::tempdir().expect("temp dir");
    let output = Command::new(env!("CARGO_BIN_EXE_kubegen"))
        .current_dir(&dir)
        .args(["--output", &out.path().join("gen").display().to_string()])
        .args(["--crd", &out.path().join("crd.yaml").display().to_string()])
        .args(["--builtins", "none.toml", "--boilerplate", "/dev/null"])
        .output()
        .expect("kubegen runs");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("apis/shop/v1/types.rs:4: conflicting tags"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_dir(out.path()).expect("readable").count(),
        0,
        "nothing written"
    );
}

#[test]
fn custom_methods_follow_client_gen_rules() {
    rejected("custom_method_rules");
}
