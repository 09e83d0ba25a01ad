//! kubegen used from another project, as the README describes it: `tests/fixture_project/apis`
//! (one namespaced and one cluster-scoped kind, enums, `Condition` and the other well-known
//! types) in a temp dir outside the workspace, the README's `kubegen.toml` and workspace manifest,
//! the `kubegen` binary run there against this repository's runtime crates (path dependencies),
//! and `cargo check` of the result and of a controller crate using it.
//!
//! The check reuses this workspace's target dir and Cargo.lock, so it only compiles the
//! generated crates (it may wait for the target-dir lock while other builds run).

use std::path::{Path, PathBuf};
use std::process::Command;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("readable fixture") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

fn run(command: &mut Command) -> String {
    let output = command.output().expect("command starts");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{command:?} failed:\n{text}");
    text
}

/// The fenced block of the README whose first line is `first_line` (e.g. `# kubegen.toml`),
/// without the fence and the README's list indentation.
fn readme_block(repo: &Path, first_line: &str) -> String {
    let readme = std::fs::read_to_string(repo.join("README.md")).expect("README");
    let lines: Vec<&str> = readme.lines().map(str::trim_start).collect();
    let start = lines
        .iter()
        .position(|line| *line == first_line)
        .unwrap_or_else(|| panic!("README has no block starting with `{first_line}`"));
    let end = start
        + lines[start..]
            .iter()
            .position(|line| line.starts_with("```"))
            .expect("the block ends");
    lines[start..end].join("\n") + "\n"
}

/// The controller crate of the project: uses an enum, a `Condition` and the typed client.
const APP_MAIN: &str = r#"use shop_api::shop::v1::{Order, OrderPhase, OrderStatus, Packing};

fn main() {
    let order = Order {
        status: Some(OrderStatus {
            phase: Some(OrderPhase::Shipping),
            ..Default::default()
        }),
        ..Default::default()
    };
    let ready = order.status.iter().flat_map(|status| &status.conditions);
    assert_eq!(ready.filter(|c| c.type_ == "Ready").count(), 0);
    assert_eq!(order.spec.packing, None::<Packing>);
    println!("{order:?}");
}

pub fn orders(client: kubegen_client::Client) -> shop_clientset::shop::v1::OrderClient {
    shop_clientset::shop::v1::ShopV1Client::new(client).orders("default")
}
"#;

/// No generated file names an absolute path (the runtime dir is configured absolute here).
fn assert_no_absolute_paths(dir: &Path, absolute: &Path) {
    for entry in std::fs::read_dir(dir).expect("readable") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            assert_no_absolute_paths(&path, absolute);
        } else {
            let text = std::fs::read_to_string(&path).expect("text file");
            assert!(
                !text.contains(&format!("\"{}", absolute.display())) && !text.contains("= \"/"),
                "{} holds an absolute path:\n{text}",
                path.display()
            );
        }
    }
}

/// kubegen used as the README says: the README's `kubegen.toml` (runtime pointing at this
/// repository's crates) and workspace manifest, the fixture's `apis/` (enums, `Condition` and every
/// other well-known type), no boilerplate file; then `cargo check` of the generated crates and of
/// a controller crate using them.
#[test]
fn fixture_project_generates_and_builds_against_the_runtime_crates() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let repo = repo.canonicalize().expect("repo root");
    let project = tempfile::tempdir().expect("temp dir");
    let dir = project.path();
    copy_dir(
        &repo.join("codegen/tests/fixture_project/apis"),
        &dir.join("apis"),
    );
    let crates = repo.join("crates");
    // The README points `runtime` at kubegen's git repository; this test uses the path form
    // (the git form is the tutorial's, scripts/tutorial.sh).
    let config: String = readme_block(&repo, "# kubegen.toml")
        .lines()
        .map(|line| match line.starts_with("runtime") {
            true => format!("runtime = \"path:{}\"\n", crates.display()),
            false => format!("{line}\n"),
        })
        .collect();
    std::fs::write(dir.join("kubegen.toml"), config).expect("kubegen.toml");

    let out = run(Command::new(env!("CARGO_BIN_EXE_kubegen")).current_dir(dir));
    assert!(out.contains("kubegen: 28 files, 28 written"), "{out}");
    let clientset = std::fs::read_to_string(dir.join("generated/clientset/src/shop/v1.rs"))
        .expect("clientset generated");
    assert!(
        clientset.starts_with("// @generated by kubegen"),
        "no boilerplate configured"
    );
    assert!(clientset.contains("pub fn orders(&self, namespace: &str) -> OrderClient"));
    assert!(clientset.contains("pub fn regions(&self) -> RegionClient"));
    assert_no_absolute_paths(&dir.join("generated"), &crates);
    let listers = std::fs::read_to_string(dir.join("generated/listers/Cargo.toml")).expect("toml");
    let relative = format!("path = \"../../{}/cache\"", relative_to(dir, &crates));
    assert!(listers.contains(&relative), "{listers}");
    let api = std::fs::read_to_string(dir.join("generated/api/Cargo.toml")).expect("toml");
    assert!(
        api.contains(
            r#"k8s-openapi = { version = "0.29.0", default-features = false, features = ["std"] }"#
        ),
        "a library picks no Kubernetes version: {api}"
    );
    let crds = std::fs::read_to_string(dir.join("deploy/crds.yaml")).expect("CRDs generated");
    assert!(crds.contains("name: orders.shop.example.com") && crds.contains("scope: Cluster"));
    assert!(crds.contains("- gift-box") && crds.contains("x-kubernetes-list-map-keys:"));

    let workspace = readme_block(&repo, "# Cargo.toml");
    // The workspace's dev profile, so that dependencies compiled for it are reused.
    let profile = "[profile.dev]\ndebug = \"line-tables-only\"\n\n\
                   [profile.dev.package.\"*\"]\nopt-level = 1\ndebug = false\n";
    std::fs::write(dir.join("Cargo.toml"), format!("{workspace}\n{profile}")).expect("manifest");
    let app = format!(
        "[package]\nname = \"shop-app\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\nshop-api = {{ path = \"../generated/api\" }}\n\
         shop-clientset = {{ path = \"../generated/clientset\" }}\n\
         kubegen-client = {{ path = \"{}\" }}\n\
         k8s-openapi = {{ version = \"0.29.0\", default-features = false, features = [\"std\", \"latest\"] }}\n",
        crates.join("client").display(),
    );
    std::fs::create_dir_all(dir.join("operator/src")).expect("mkdir");
    std::fs::write(dir.join("operator/Cargo.toml"), app).expect("app manifest");
    std::fs::write(dir.join("operator/src/main.rs"), APP_MAIN).expect("app main");
    std::fs::copy(repo.join("Cargo.lock"), dir.join("Cargo.lock")).expect("lock file");
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| repo.join("target"), PathBuf::from);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut check = Command::new(cargo);
    // The test runner's `CARGO_PKG_*`, `CARGO_MANIFEST_*` and the like would reach this cargo's
    // build scripts' `rerun-if-env-changed` (ring watches several): the shared target's
    // fingerprints would change, and the next `cargo test` would rebuild ring and everything
    // above it, twice the disk on a CI machine. What the user set for every build (the cargo
    // home, incremental and profile settings, as `.ci/run` sets them) stays, for the same reason.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let user_setting = name == "CARGO_HOME"
            || name == "CARGO_INCREMENTAL"
            || name.starts_with("CARGO_PROFILE_");
        if name.starts_with("CARGO_") && !user_setting {
            check.env_remove(&*name);
        }
    }
    run(check
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .args([
            "check",
            "--offline",
            "--workspace",
            "--all-features",
            "--quiet",
        ]));
}

/// `to` relative to `from` (both absolute), with `/` separators.
fn relative_to(from: &Path, to: &Path) -> String {
    let from = from.canonicalize().expect("exists");
    let common = from
        .components()
        .zip(to.components())
        .take_while(|(a, b)| a == b)
        .count();
    let ups = std::iter::repeat_n("..".to_owned(), from.components().count() - common);
    let downs = to
        .components()
        .skip(common)
        .map(|part| part.as_os_str().to_string_lossy().into_owned());
    ups.chain(downs).collect::<Vec<_>>().join("/")
}

#[test]
fn check_reports_drift_and_regeneration_deletes_files_of_removed_types() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let project = tempfile::tempdir().expect("temp dir");
    let dir = project.path();
    copy_dir(&repo.join("codegen/tests/fixture_project"), dir);
    let kubegen = || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_kubegen"));
        command.current_dir(dir).arg("--runtime=version:0.1.0");
        command
    };
    run(&mut kubegen());
    let api = dir.join("generated/api/src/shop/v1.rs");
    let header = std::fs::read_to_string(&api).expect("generated");
    assert!(header.starts_with("// Copyright The Shop Authors.\n// @generated by kubegen"));
    let clean = kubegen().arg("--check").output().expect("runs");
    assert_eq!(clean.status.code(), Some(0));

    let edited = std::fs::read_to_string(&api)
        .expect("generated")
        .replace("A customer order.", "Edited.");
    let this = env!("CARGO_PKG_VERSION");
    let older = edited.replace(
        &format!("@generated by kubegen {this} from"),
        "@generated by kubegen 0.0.1 from",
    );
    std::fs::write(&api, edited).expect("edit");
    let drift = kubegen().arg("--check").output().expect("runs");
    assert_eq!(drift.status.code(), Some(1));
    let diff = String::from_utf8_lossy(&drift.stdout);
    assert!(
        diff.contains("-/// Edited.\n+/// A customer order.\n"),
        "{diff}"
    );
    assert!(
        !String::from_utf8_lossy(&drift.stderr).contains("this is kubegen"),
        "same version: no version note"
    );
    std::fs::write(&api, older).expect("edit");
    let upgrade = kubegen().arg("--check").output().expect("runs");
    assert_eq!(upgrade.status.code(), Some(1));
    let note = String::from_utf8_lossy(&upgrade.stderr);
    assert!(
        note.contains(&format!(
            "generated by kubegen 0.0.1, this is kubegen {this}: regenerate"
        )),
        "{note}"
    );

    std::fs::remove_file(dir.join("apis/shop/v1/order.rs")).expect("remove a type");
    std::fs::remove_file(dir.join("apis/shop/v1/region.rs")).expect("remove a type");
    std::fs::remove_dir_all(dir.join("apis/shop")).expect("remove the group");
    let out = run(&mut kubegen());
    assert!(
        out.contains("deleted stale generated/api/src/shop/v1.rs"),
        "{out}"
    );
    assert!(!dir.join("generated/clientset/src/shop/v1.rs").exists());
    assert!(
        dir.join("generated/api/src/lib.rs").exists(),
        "crate roots stay"
    );
}
