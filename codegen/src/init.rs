//! `kubegen init`: a new operator repository in an empty directory, the counterpart of
//! kubebuilder's `init` + `create api` in one step.
//!
//! Why a scaffold: the pieces of a production operator (a workspace holding the generated crates,
//! a manager with metrics, probes, leader election and graceful shutdown, least-privilege RBAC, a
//! Deployment with probes, an image build, a test on an in-process API server) are easy to get
//! subtly wrong and tedious to copy out of a tutorial. The scaffold writes them once, as plain code
//! the user owns and edits; `kubegen` (the generator) never touches them afterwards.
//!
//! The files are real files under `init/templates/` (so they read, and diff, as code), filled by
//! plain `{{name}}` replacement: no template language, no conditionals. What differs between a
//! namespaced and a cluster-scoped kind is a whole value (`{{scope_marker}}`, `{{test_namespace}}`).
//!
//! # Guarantees
//! - Refuses a directory that is not empty: nothing is ever overwritten.
//! - No written file holds an absolute path: `--runtime-path` is written relative to the new
//!   repository (and to `operator/`), so the repository can be committed and cloned anywhere.
//! - The operator crate depends on kubegen's runtime by the same source as `runtime` in
//!   `kubegen.toml`, so cargo builds one copy of each runtime crate.

use std::path::{Path, PathBuf};

use crate::Error;
use crate::generated::VERSION;
use crate::names;
use crate::runtime::{Runtime, path_text, relative_path, toml_string};

/// What `kubegen init` scaffolds.
#[derive(Clone, Debug)]
pub struct InitOptions {
    /// The new repository; must be empty or missing (it is created).
    pub dir: PathBuf,
    /// Operator name (crate, binary, Deployment, lease); `None`: the directory's name.
    pub name: Option<String>,
    /// API group of the kind, e.g. `greetings.example.com`.
    pub group: String,
    /// API version, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `Greeting`.
    pub kind: String,
    /// Whether the kind is cluster-scoped (`+genclient:nonNamespaced`); namespaced otherwise.
    pub cluster_scoped: bool,
    /// Where kubegen's runtime crates come from: [`Runtime::Git`] (the repository and commit
    /// the generator was installed from) or [`Runtime::Path`] (relative to the current
    /// directory, or absolute). There is no default: a generator cannot tell where it was
    /// installed from, and a guessed URL would only fail at the first build.
    pub runtime: Runtime,
}

/// What `init` wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scaffold {
    /// The operator's name.
    pub name: String,
    /// The files written, relative to the new repository, sorted.
    pub files: Vec<PathBuf>,
}

/// One file of the scaffold: where it goes (may hold placeholders) and its template.
struct Template {
    path: &'static str,
    text: &'static str,
}

/// Every file `init` writes. `deploy/crds.yaml` is not among them: `kubegen` generates it.
const TEMPLATES: [Template; 14] = [
    Template {
        path: "kubegen.toml",
        text: include_str!("init/templates/kubegen.toml"),
    },
    Template {
        path: "Cargo.toml",
        text: include_str!("init/templates/workspace_Cargo.toml"),
    },
    Template {
        path: "README.md",
        text: include_str!("init/templates/README.md"),
    },
    Template {
        path: ".gitignore",
        text: include_str!("init/templates/gitignore"),
    },
    Template {
        path: ".dockerignore",
        text: include_str!("init/templates/dockerignore"),
    },
    Template {
        path: "Dockerfile",
        text: include_str!("init/templates/Dockerfile"),
    },
    Template {
        path: "apis/{{module}}/{{version}}/mod.rs",
        text: include_str!("init/templates/group_mod.rs"),
    },
    Template {
        path: "apis/{{module}}/{{version}}/{{kind_snake}}.rs",
        text: include_str!("init/templates/kind.rs"),
    },
    Template {
        path: "operator/Cargo.toml",
        text: include_str!("init/templates/operator_Cargo.toml"),
    },
    Template {
        path: "operator/src/main.rs",
        text: include_str!("init/templates/main.rs"),
    },
    Template {
        path: "operator/src/lib.rs",
        text: include_str!("init/templates/lib.rs"),
    },
    Template {
        path: "operator/tests/{{kind_snake}}.rs",
        text: include_str!("init/templates/operator_test.rs"),
    },
    Template {
        path: "deploy/rbac.yaml",
        text: include_str!("init/templates/rbac.yaml"),
    },
    Template {
        path: "deploy/deployment.yaml",
        text: include_str!("init/templates/deployment.yaml"),
    },
];

/// Writes a new operator repository into `options.dir`.
///
/// # Errors
/// [`Error::InitNotEmpty`] when the directory has any entry, [`Error::InitOption`] for an
/// invalid option, [`Error::Write`] when a file cannot be written.
pub fn init(options: &InitOptions) -> Result<Scaffold, Error> {
    let values = values(options)?;
    refuse_non_empty(&options.dir)?;
    let name = value(&values, "name").to_owned();
    let mut files = Vec::new();
    for template in &TEMPLATES {
        let path = PathBuf::from(fill(template.path, &values));
        let full = options.dir.join(&path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).map_err(|source| Error::Write {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        std::fs::write(&full, fill(template.text, &values))
            .map_err(|source| Error::Write { path: full, source })?;
        files.push(path);
    }
    files.sort();
    Ok(Scaffold { name, files })
}

/// A missing directory is fine (it is created); an existing one must have no entry at all.
fn refuse_non_empty(dir: &Path) -> Result<(), Error> {
    let not_empty = || Error::InitNotEmpty {
        path: dir.to_path_buf(),
    };
    match std::fs::read_dir(dir).map(|mut entries| entries.next().is_some()) {
        Ok(true) => Err(not_empty()),
        Ok(false) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(Error::Write {
            path: dir.to_path_buf(),
            source,
        }),
    }
}

/// Placeholder values, all derived from the options here, so the templates stay free of logic.
fn values(options: &InitOptions) -> Result<Vec<(&'static str, String)>, Error> {
    check_group(&options.group)?;
    check_version(&options.version)?;
    check_kind(&options.kind)?;
    let name = match &options.name {
        Some(name) => name.clone(),
        None => dir_name(&options.dir),
    };
    check_name(&name, options.name.is_none())?;
    let label = options.group.split('.').next().unwrap_or_default();
    let module = label.replace('-', "_");
    let accessor = names::snake(&names::plural_camel(&options.kind));
    let runtime = runtime_in(&options.dir, options.runtime.clone())?;
    let dependency = |krate: &str| runtime.dependency(krate, &options.dir, Path::new("operator"));
    let (scope_marker, namespace_line, namespace_arg, test_namespace) = if options.cluster_scoped {
        ("\n/// +genclient:nonNamespaced", "", "", "")
    } else {
        (
            "",
            "        let namespace = object.metadata.namespace.as_deref().unwrap_or_default();\n",
            "namespace",
            "\"default\"",
        )
    };
    Ok(vec![
        ("kubegen_version", VERSION.to_owned()),
        ("name", name.clone()),
        ("crate", name.replace('-', "_")),
        ("namespace", format!("{name}-system")),
        ("prefix", label.to_owned()),
        ("prefix_ident", module.clone()),
        ("group_version", format!("{module}_{}", options.version)),
        ("module", module),
        ("group", options.group.clone()),
        ("version", options.version.clone()),
        ("kind", options.kind.clone()),
        ("kind_snake", names::snake(&options.kind)),
        ("plural", names::default_plural(&options.kind)),
        ("accessor", accessor),
        ("scope_marker", scope_marker.to_owned()),
        ("namespace_line", namespace_line.to_owned()),
        ("namespace_arg", namespace_arg.to_owned()),
        ("test_namespace", test_namespace.to_owned()),
        ("runtime", runtime_toml(&runtime)),
        ("dep_runtime", dependency("runtime")),
        ("dep_client", dependency("client")),
        ("dep_cache", dependency("cache")),
        ("dep_testserver", dependency("testserver")),
    ])
}

/// The runtime as the new repository names it: a `path:` relative to `dir` (the flag's path is
/// relative to the current directory, or absolute); git as given.
fn runtime_in(dir: &Path, runtime: Runtime) -> Result<Runtime, Error> {
    match runtime {
        Runtime::Path(path) => Ok(Runtime::Path(relative_path(dir, &path))),
        git @ Runtime::Git(_) => Ok(git),
        other => Err(Error::InitOption {
            option: "runtime",
            value: format!("{other:?}"),
            message: "a scaffold takes its runtime from git (--runtime-git) or a path \
                      (--runtime-path)"
                .to_owned(),
        }),
    }
}

/// The `runtime = ...` value of `kubegen.toml`.
fn runtime_toml(runtime: &Runtime) -> String {
    match runtime {
        Runtime::Path(path) => toml_string(&format!("path:{}", path_text(path))),
        other => format!(
            "{{ {} }}",
            other.dependency("", Path::new("."), Path::new("."))
        ),
    }
}

/// `template` with every `{{key}}` replaced by its value.
fn fill(template: &str, values: &[(&'static str, String)]) -> String {
    let mut out = template.to_owned();
    for (key, value) in values {
        out = out.replace(&format!("{{{{{key}}}}}"), value);
    }
    out
}

fn value<'a>(values: &'a [(&'static str, String)], key: &str) -> &'a str {
    values
        .iter()
        .find(|(k, _)| *k == key)
        .map_or("", |(_, value)| value.as_str())
}

/// The last component of `dir` (of the current directory for `.`).
fn dir_name(dir: &Path) -> String {
    let full = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let normalized = relative_path(Path::new("/"), &full);
    normalized
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn bad(option: &'static str, value: &str, message: &str) -> Error {
    Error::InitOption {
        option,
        value: value.to_owned(),
        message: message.to_owned(),
    }
}

/// A DNS subdomain with at least two labels, as CRD groups must be.
fn check_group(group: &str) -> Result<(), Error> {
    let labels_ok = group.split('.').all(|label| {
        !label.is_empty()
            && label.len() <= 63
            && label
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && label.starts_with(|c: char| c.is_ascii_lowercase())
            && !label.ends_with('-')
    });
    if group.contains('.') && labels_ok {
        Ok(())
    } else {
        Err(bad(
            "group",
            group,
            "expected a lowercase DNS name with a dot, e.g. `greetings.example.com`",
        ))
    }
}

/// `v1`, `v1beta1`, `v2alpha3`: Kubernetes API version names.
fn check_version(version: &str) -> Result<(), Error> {
    let number = |text: &str| {
        !text.is_empty() && !text.starts_with('0') && text.chars().all(|c| c.is_ascii_digit())
    };
    let valid = version.strip_prefix('v').is_some_and(|rest| {
        let (major, level) = match rest.find(|c: char| c.is_ascii_alphabetic()) {
            Some(at) => rest.split_at(at),
            None => (rest, ""),
        };
        let level_ok = level.is_empty()
            || ["alpha", "beta"]
                .iter()
                .any(|stage| level.strip_prefix(stage).is_some_and(number));
        number(major) && level_ok
    });
    if valid {
        Ok(())
    } else {
        Err(bad(
            "version",
            version,
            "expected a Kubernetes API version such as `v1`, `v1beta1`, `v2alpha1`",
        ))
    }
}

/// An UpperCamelCase ASCII identifier.
fn check_kind(kind: &str) -> Result<(), Error> {
    let valid = kind.starts_with(|c: char| c.is_ascii_uppercase())
        && kind.chars().all(|c| c.is_ascii_alphanumeric());
    if valid {
        Ok(())
    } else {
        Err(bad(
            "kind",
            kind,
            "expected an UpperCamelCase name such as `Greeting`",
        ))
    }
}

/// A DNS label: it names the crate, the binary, the Deployment and the lease.
fn check_name(name: &str, from_dir: bool) -> Result<(), Error> {
    let valid = !name.is_empty()
        && name.len() <= 63
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && !name.ends_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    match (valid, from_dir) {
        (true, _) => Ok(()),
        (false, false) => Err(bad(
            "name",
            name,
            "expected a lowercase DNS label such as `greeting-operator`",
        )),
        (false, true) => Err(bad(
            "name",
            name,
            "the directory's name is not a lowercase DNS label: pass --name greeting-operator",
        )),
    }
}

#[cfg(test)]
#[path = "init_tests.rs"]
mod tests;
