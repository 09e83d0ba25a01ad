//! `kubegen init` end to end: scaffold into an empty temp dir, run the generator there, and check
//! that the result is a self-contained repository (relative paths and git URLs only, generated
//! code up to date). Building the scaffold is left to CI (it compiles the whole runtime).

use std::path::Path;
use std::process::{Command, Output};

fn kubegen(dir: &Path, args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_kubegen"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("kubegen starts");
    assert!(
        output.status.success(),
        "kubegen {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Every file under `dir` (relative), with its text.
fn files(dir: &Path, under: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(under).expect("readable") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            files(dir, &path, out);
        } else {
            let text = std::fs::read_to_string(&path).expect("text");
            let relative = path.strip_prefix(dir).expect("under dir");
            out.push((relative.display().to_string(), text));
        }
    }
}

/// No file of the repository names an absolute path: not the temp dir, not `absolute` (the
/// runtime path given on the command line), no `path = "/..."`.
fn assert_relative_only(repo: &Path, absolute: &Path) {
    let mut all = Vec::new();
    files(repo, repo, &mut all);
    let temp = repo.parent().expect("temp dir").display().to_string();
    for (path, text) in &all {
        for forbidden in [format!("\"{}", absolute.display()), temp.clone()] {
            assert!(
                !text.contains(&forbidden),
                "{path} names `{forbidden}`:\n{text}"
            );
        }
        assert!(
            !text.contains("= \"/"),
            "{path} holds an absolute path:\n{text}"
        );
    }
}

#[test]
fn init_then_generate_writes_a_repository_with_relative_paths_only() {
    let temp = tempfile::tempdir().expect("temp dir");
    let temp_path = temp.path().canonicalize().expect("temp dir");
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates");
    let crates = crates.canonicalize().expect("runtime crates");
    let runtime = format!("--runtime-path={}", crates.display());
    let args = [
        "init",
        "hello-operator",
        "--group=greetings.example.com",
        "--version=v1",
        "--kind=Greeting",
        "--namespaced",
        &runtime,
    ];
    let out = kubegen(&temp_path, &args);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("scaffolded hello-operator"),
        "{out:?}"
    );
    let repo = temp_path.join("hello-operator");
    let out = kubegen(&repo, &[]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("kubegen: 26 files, 26 written"),
        "{out:?}"
    );
    kubegen(&repo, &["--check"]);
    for file in [
        "deploy/crds.yaml",
        "deploy/rbac.yaml",
        "deploy/deployment.yaml",
        "Dockerfile",
        "generated/informers/src/factory.rs",
        "operator/src/main.rs",
        "operator/src/lib.rs",
        "operator/tests/greeting.rs",
    ] {
        assert!(repo.join(file).is_file(), "{file} missing");
    }
    let crds = std::fs::read_to_string(repo.join("deploy/crds.yaml")).expect("CRDs");
    assert!(
        crds.contains("name: greetings.greetings.example.com"),
        "{crds}"
    );
    assert!(crds.contains("x-kubernetes-list-map-keys:"), "{crds}");
    assert_relative_only(&repo, &crates);
    let config = std::fs::read_to_string(repo.join("kubegen.toml")).expect("config");
    assert!(config.contains("runtime = \"path:../"), "{config}");

    let again = Command::new(env!("CARGO_BIN_EXE_kubegen"))
        .current_dir(&repo)
        .arg("init")
        .args(&args[2..5])
        .arg(&runtime)
        .output()
        .expect("runs");
    assert_eq!(again.status.code(), Some(2));
    let refusal = String::from_utf8_lossy(&again.stderr);
    assert!(refusal.contains("is not empty"), "{refusal}");
}

#[test]
fn init_without_a_runtime_source_says_which_flags_give_one() {
    let temp = tempfile::tempdir().expect("temp dir");
    let out = Command::new(env!("CARGO_BIN_EXE_kubegen"))
        .current_dir(temp.path())
        .args([
            "init",
            "shop",
            "--group=shop.example.com",
            "--version=v1",
            "--kind=Order",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let error = String::from_utf8_lossy(&out.stderr);
    assert!(
        error.contains("--runtime-git") && error.contains("--runtime-path"),
        "{error}"
    );
    assert!(!temp.path().join("shop").exists(), "nothing written");
}

#[test]
fn init_with_a_git_runtime_names_it_everywhere() {
    let temp = tempfile::tempdir().expect("temp dir");
    let temp_path = temp.path().canonicalize().expect("temp dir");
    let url = "https://example.com/kubegen.git";
    kubegen(
        &temp_path,
        &[
            "init",
            "shop",
            "--group=shop.example.com",
            "--version=v1beta1",
            "--kind=Order",
            "--cluster-scoped",
            &format!("--runtime-git={url}"),
            "--rev=0123abc",
        ],
    );
    let repo = temp_path.join("shop");
    kubegen(&repo, &[]);
    let spec = format!("{{ git = \"{url}\", rev = \"0123abc\" }}");
    for manifest in ["operator/Cargo.toml", "generated/clientset/Cargo.toml"] {
        let text = std::fs::read_to_string(repo.join(manifest)).expect("manifest");
        assert!(
            text.contains(&format!("kubegen-client = {spec}")),
            "{manifest}:\n{text}"
        );
    }
    let crds = std::fs::read_to_string(repo.join("deploy/crds.yaml")).expect("CRDs");
    assert!(crds.contains("scope: Cluster"), "{crds}");
    assert_relative_only(&repo, Path::new("/nonexistent"));
}
