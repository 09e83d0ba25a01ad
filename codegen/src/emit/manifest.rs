//! `Cargo.toml` of each generated crate.
//!
//! Not Rust, so not a TokenStream: a fixed line layout filled from [`Runtime`]. Sibling generated
//! crates are always path dependencies, so the generated set moves as one unit.
//!
//! # k8s-openapi's version feature
//! k8s-openapi compiles for exactly one Kubernetes version, chosen by a feature (`latest`,
//! `earliest`, `v1_xx`), and two in one build fail. Its rule is that only the final application
//! picks: the generated crates are libraries, so outside a workspace they depend on it with
//! `default-features = false, features = ["std"]` and no version, and the project's operator
//! crate enables one. With `runtime = "workspace"` they inherit the workspace's entry.

use std::fmt::Write as _;

use super::ctx::EmitCtx;
use crate::model::{FieldType, Model};
use crate::runtime::Runtime;

/// Third-party dependencies and the versions pinned when not inheriting from a workspace. No
/// k8s-openapi version feature: the application picks it (see the module docs).
const THIRD_PARTY: [(&str, &str); 5] = [
    (
        "kube-core",
        r#"version = "5.0.0", default-features = false"#,
    ),
    (
        "k8s-openapi",
        r#"version = "0.29.0", default-features = false, features = ["std"]"#,
    ),
    ("serde", r#"version = "1.0.219", features = ["derive"]"#),
    ("serde_json", r#"version = "1.0.140""#),
    (
        "serde_with",
        r#"version = "3.12.0", default-features = false, features = ["std"]"#,
    ),
];

/// The dependencies of one generated crate, exactly what its code names: (name, kind,
/// optional). The clientset names `k8s_openapi` only in custom methods over built-in bodies
/// (`+genclient:method=...,input=k8s_openapi::...`).
fn dependencies(part: &str, model: &Model) -> Vec<(&'static str, Dep, bool)> {
    use Dep::{Generated, Runtime as Rt, ThirdParty};
    match part {
        "api" => {
            let mut deps = vec![
                ("k8s-openapi", ThirdParty, false),
                ("kube-core", ThirdParty, false),
                ("serde", ThirdParty, false),
            ];
            if names_serde_json(model) {
                deps.push(("serde_json", ThirdParty, false));
            }
            if has_nullable_field(model) {
                deps.push(("serde_with", ThirdParty, false));
            }
            deps
        }
        "clientset" => {
            let mut deps = vec![
                ("api", Generated, false),
                ("applyconfigurations", Generated, false),
                ("client", Rt, false),
                ("fake", Rt, true),
            ];
            if names_k8s_openapi(model) {
                deps.push(("k8s-openapi", ThirdParty, false));
            }
            deps.extend([
                ("kube-core", ThirdParty, false),
                ("serde", ThirdParty, true),
            ]);
            deps
        }
        // Kinds and enums from the api crate, `extract` from the client, k8s-openapi's scalars.
        "applyconfigurations" => {
            let mut deps = vec![
                ("api", Generated, false),
                ("client", Rt, false),
                ("k8s-openapi", ThirdParty, false),
                ("kube-core", ThirdParty, false),
                ("serde", ThirdParty, false),
                ("serde_json", ThirdParty, false),
            ];
            // A nullable field's configuration can say `null` (`with_<field>_null`).
            if has_nullable_field(model) {
                deps.push(("serde_with", ThirdParty, false));
            }
            deps
        }
        "listers" => vec![
            ("api", Generated, false),
            ("cache", Rt, false),
            ("kube-core", ThirdParty, false),
        ],
        // The factory is built over a `kubegen_client::Client` through cache's client adapter.
        _ => vec![
            ("api", Generated, false),
            ("listers", Generated, false),
            ("cache", Rt, false),
            ("client", Rt, false),
        ],
    }
}

/// Whether a field of an API type is a `serde_json::Value` or `serde_json::Number`, or a struct
/// keeps its unknown fields (as `serde_json::Value`s).
fn names_serde_json(model: &Model) -> bool {
    fn json(ty: &FieldType) -> bool {
        match ty {
            FieldType::Json | FieldType::Number => true,
            FieldType::Option(inner) | FieldType::Vec(inner) | FieldType::Map(inner) => json(inner),
            _ => false,
        }
    }
    let fields = model
        .packages
        .iter()
        .flat_map(|p| &p.structs)
        .flat_map(|s| &s.fields);
    let keeps_unknown = model.packages.iter().any(|package| {
        package
            .structs
            .iter()
            .any(|def| package.keeps_unknown_fields(def))
    });
    keeps_unknown || fields.map(|field| &field.ty).any(json)
}

/// Whether a field of an API type is nullable (`Option<Option<T>>`), read through serde_with.
fn has_nullable_field(model: &Model) -> bool {
    model
        .packages
        .iter()
        .flat_map(|p| &p.structs)
        .flat_map(|s| &s.fields)
        .any(|field| field.ty.is_nullable())
}

/// Whether a custom method's body or result is a k8s-openapi type.
fn names_k8s_openapi(model: &Model) -> bool {
    model
        .packages
        .iter()
        .flat_map(|package| &package.kinds)
        .flat_map(|kind| &kind.methods)
        .flat_map(|method| [&method.input, &method.result])
        .flatten()
        .any(|ty| ty.starts_with("k8s_openapi::"))
}

/// The version every generated crate has.
const GENERATED_VERSION: &str = "0.1.0";

#[derive(Clone, Copy)]
enum Dep {
    Generated,
    Runtime,
    ThirdParty,
}

/// The `Cargo.toml` text of generated crate `part`.
pub(super) fn cargo_toml(ctx: &EmitCtx<'_>, part: &str) -> String {
    let config = ctx.config;
    let workspace = config.runtime == Runtime::Workspace;
    let mut out = String::new();
    for line in ctx.boilerplate.lines() {
        let text = line.trim_start_matches("//").trim_start();
        let _ = writeln!(out, "# {text}");
    }
    let _ = writeln!(
        out,
        "# {}\n",
        crate::generated::header(&config.input.display().to_string())
    );
    out.push_str("[package]\n");
    let _ = writeln!(out, "name = \"{}\"", config.crate_name(part));
    let _ = writeln!(out, "description = \"Generated by kubegen: {part}\"");
    let _ = writeln!(out, "version = \"{GENERATED_VERSION}\"");
    if workspace {
        out.push_str("edition.workspace = true\nrust-version.workspace = true\nlicense.workspace = true\npublish.workspace = true\nrepository.workspace = true\n\n[package.metadata.docs.rs]\nfeatures = [\"k8s-openapi/latest\"]\n\n[lints]\nworkspace = true\n");
    } else {
        out.push_str(
            "edition = \"2024\"\npublish = false\n\n[lints.rust]\nmissing_docs = \"warn\"\n",
        );
    }
    out.push_str("\n[dependencies]\n");
    let crate_dir = ctx.crate_dir(part);
    for (name, dep, optional) in dependencies(part, ctx.model) {
        let mut parts = vec![match (dep, &config.runtime) {
            // In kubegen's own workspace the generated crates are published with the others,
            // and a packaged crate names its siblings by version.
            (Dep::Generated, Runtime::Workspace) => {
                format!("path = \"../{name}\", version = \"{GENERATED_VERSION}\"")
            }
            (Dep::Generated, _) => format!("path = \"../{name}\""),
            (_, Runtime::Workspace) => "workspace = true".to_owned(),
            (Dep::ThirdParty, _) => THIRD_PARTY
                .iter()
                .find(|(n, _)| *n == name)
                .map_or_else(String::new, |(_, spec)| (*spec).to_owned()),
            (Dep::Runtime, runtime) => runtime.dependency(name, &config.root, &crate_dir),
        }];
        if name == "cache" && part == "informers" {
            parts.push("features = [\"client\"]".to_owned());
        }
        if optional {
            parts.push("optional = true".to_owned());
        }
        let full_name = match dep {
            Dep::Generated => config.crate_name(name),
            Dep::Runtime => format!("kubegen-{name}"),
            Dep::ThirdParty => name.to_owned(),
        };
        let _ = writeln!(out, "{full_name} = {{ {} }}", parts.join(", "));
    }
    if part == "clientset" {
        out.push_str("\n[features]\n# The generated fake clientset (`kubegen_clientset::fake`), for tests.\nfake = [\"dep:kubegen-fake\", \"dep:serde\"]\n");
    }
    out
}
