//! How generated crates (and a `kubegen init` scaffold) depend on kubegen's runtime crates: the
//! `runtime` key of `kubegen.toml`.
//!
//! kubegen's runtime crates (`kubegen-client`, `kubegen-cache`, `kubegen-fake`, ...) are not on
//! crates.io, so a project outside this repository names them by git (the usual case), by path
//! (a clone next to it) or by version (a private registry). Every generated `Cargo.toml` and the
//! scaffold's `operator/Cargo.toml` render the same [`Runtime`] through [`Runtime::dependency`],
//! so both always name one source and cargo builds one copy of each runtime crate.
//!
//! ```toml
//! runtime = "workspace"                                   # inside kubegen's own workspace
//! runtime = "path:../kubegen/crates"                      # a clone, relative to kubegen.toml
//! runtime = "version:0.1.0"                               # a registry that has them
//! runtime = { git = "https://github.com/kubegen/kubegen", tag = "v0.1.0" }  # or rev / branch
//! ```
//!
//! # Guarantees
//! A rendered dependency never holds an absolute path: `path:` is rewritten relative to the crate
//! that depends on it, so the generated files can be committed and built on any machine.

use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

/// How the generated `Cargo.toml`s name kubegen's runtime crates (and third-party crates).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "toml::Value")]
pub enum Runtime {
    /// `{ workspace = true }` for everything: the workspace pins all versions (this repository).
    Workspace,
    /// kubegen's runtime crates by path: the directory holding `client/`, `cache/`, `fake/`
    /// (relative to `kubegen.toml`, or absolute); third-party crates by version.
    Path(PathBuf),
    /// kubegen's runtime crates by version from a registry; third-party crates by version.
    Version(String),
    /// kubegen's runtime crates from a git repository (cargo finds each crate by name in it);
    /// third-party crates by version.
    Git(GitSource),
}

/// A git repository holding kubegen's workspace, as Cargo's `git` dependencies name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GitSource {
    /// The repository URL, e.g. `https://github.com/kubegen/kubegen`.
    pub url: String,
    /// Which commit; `None` is the default branch's head (cargo pins it in `Cargo.lock`).
    pub reference: Option<GitReference>,
}

/// Cargo's three ways to pick a commit of a git dependency.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GitReference {
    /// `rev = "<commit>"`.
    Rev(String),
    /// `tag = "<tag>"`.
    Tag(String),
    /// `branch = "<branch>"`.
    Branch(String),
}

impl GitReference {
    /// The Cargo key and its value.
    fn key_value(&self) -> (&'static str, &str) {
        match self {
            GitReference::Rev(rev) => ("rev", rev),
            GitReference::Tag(tag) => ("tag", tag),
            GitReference::Branch(branch) => ("branch", branch),
        }
    }
}

impl Runtime {
    /// The inside of the braces of the dependency on runtime crate `kubegen-<name>` (`client`,
    /// `cache`, ...), for a crate in directory `from`. `root` is the directory `kubegen.toml` is
    /// in; `from` is relative to it (or absolute).
    ///
    /// `path = "../../kubegen/crates/client"`, `git = "<url>", tag = "v0.1.0"`,
    /// `version = "0.1.0"` or `workspace = true`.
    pub(crate) fn dependency(&self, name: &str, root: &Path, from: &Path) -> String {
        match self {
            Runtime::Workspace => "workspace = true".to_owned(),
            Runtime::Version(version) => format!("version = {}", toml_string(version)),
            Runtime::Path(dir) => {
                let path = relative_path(&root.join(from), &root.join(dir).join(name));
                format!("path = {}", toml_string(&path_text(&path)))
            }
            Runtime::Git(source) => {
                let mut out = format!("git = {}", toml_string(&source.url));
                if let Some(reference) = &source.reference {
                    let (key, value) = reference.key_value();
                    out.push_str(&format!(", {key} = {}", toml_string(value)));
                }
                out
            }
        }
    }
}

impl TryFrom<String> for Runtime {
    type Error = String;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        if value == "workspace" {
            Ok(Runtime::Workspace)
        } else if let Some(path) = value.strip_prefix("path:") {
            Ok(Runtime::Path(PathBuf::from(path)))
        } else if let Some(version) = value.strip_prefix("version:") {
            Ok(Runtime::Version(version.to_owned()))
        } else {
            Err(format!(
                "runtime `{value}`: expected `workspace`, `path:<dir>`, `version:<v>` or a table \
                 `{{ git = \"<url>\", rev|tag|branch = \"...\" }}`"
            ))
        }
    }
}

/// `runtime = "..."` or `runtime = { git = "...", tag = "..." }`.
impl TryFrom<toml::Value> for Runtime {
    type Error = String;
    fn try_from(value: toml::Value) -> Result<Self, Self::Error> {
        match value {
            toml::Value::String(text) => Runtime::try_from(text),
            toml::Value::Table(table) => git_source(table).map(Runtime::Git),
            other => Err(format!(
                "`runtime` must be a string or a table `{{ git = \"<url>\", tag = \"...\" }}`, \
                 not a {}",
                other.type_str()
            )),
        }
    }
}

/// Reads `{ git = "<url>", rev|tag|branch = "..." }`: `git` required, at most one reference.
fn git_source(table: toml::Table) -> Result<GitSource, String> {
    let mut url = None;
    let mut references = Vec::new();
    for (key, value) in table {
        let toml::Value::String(text) = value else {
            return Err(format!("`runtime.{key}` must be a string"));
        };
        match key.as_str() {
            "git" => url = Some(text),
            "rev" => references.push(GitReference::Rev(text)),
            "tag" => references.push(GitReference::Tag(text)),
            "branch" => references.push(GitReference::Branch(text)),
            _ => {
                return Err(format!(
                    "`runtime.{key}`: unknown key; a git runtime takes `git` and at most one \
                     of `rev`, `tag`, `branch`"
                ));
            }
        }
    }
    let url = url.ok_or_else(|| {
        "`runtime` table needs `git = \"<url of kubegen's repository>\"`".to_owned()
    })?;
    if references.len() > 1 {
        let keys: Vec<&str> = references.iter().map(|r| r.key_value().0).collect();
        return Err(format!(
            "`runtime`: give at most one of `rev`, `tag`, `branch` (found `{}`), as in Cargo",
            keys.join("`, `")
        ));
    }
    Ok(GitSource {
        url,
        reference: references.pop(),
    })
}

/// `text` as a TOML basic string, quotes and escapes included.
pub(crate) fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

/// `path` with `/` separators, as Cargo manifests write paths on every platform.
pub(crate) fn path_text(path: &Path) -> String {
    let parts: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

/// The path from directory `from` to `to`, both absolute or both relative to the same
/// directory (the current one, when made absolute). `.` and `..` are resolved lexically, not by
/// following symlinks, so the result is what a reader of the two paths expects.
pub(crate) fn relative_path(from: &Path, to: &Path) -> PathBuf {
    let (from, to) = (absolute(from), absolute(to));
    let common = from
        .components()
        .zip(to.components())
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = PathBuf::new();
    for _ in from.components().skip(common) {
        out.push("..");
    }
    for part in to.components().skip(common) {
        out.push(part);
    }
    out
}

/// `path` made absolute (against the current directory) with `.` and `..` removed.
fn absolute(path: &Path) -> PathBuf {
    let full = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for part in full.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Runtime, String> {
        #[derive(Deserialize)]
        struct File {
            runtime: Runtime,
        }
        toml::from_str::<File>(text)
            .map(|file| file.runtime)
            .map_err(|error| error.to_string())
    }

    #[test]
    fn runtime_strings_parse() {
        assert_eq!(parse("runtime = \"workspace\""), Ok(Runtime::Workspace));
        assert_eq!(
            parse("runtime = \"path:../kubegen/crates\""),
            Ok(Runtime::Path(PathBuf::from("../kubegen/crates")))
        );
        assert_eq!(
            parse("runtime = \"version:0.1.0\""),
            Ok(Runtime::Version("0.1.0".to_owned()))
        );
        let error = parse("runtime = \"git:https://example.com\"").expect_err("not a form");
        assert!(error.contains("expected `workspace`"), "{error}");
    }

    #[test]
    fn a_git_table_takes_at_most_one_reference() {
        assert_eq!(
            parse("runtime = { git = \"https://example.com/k.git\", tag = \"v0.1.0\" }"),
            Ok(Runtime::Git(GitSource {
                url: "https://example.com/k.git".to_owned(),
                reference: Some(GitReference::Tag("v0.1.0".to_owned())),
            }))
        );
        assert_eq!(
            parse("runtime = { git = \"https://example.com/k.git\" }"),
            Ok(Runtime::Git(GitSource {
                url: "https://example.com/k.git".to_owned(),
                reference: None,
            }))
        );
        let two = parse("runtime = { git = \"u\", rev = \"abc\", branch = \"main\" }")
            .expect_err("two references");
        assert!(
            two.contains("at most one of `rev`, `tag`, `branch`"),
            "{two}"
        );
        let no_url = parse("runtime = { tag = \"v1\" }").expect_err("no url");
        assert!(no_url.contains("needs `git ="), "{no_url}");
        let unknown = parse("runtime = { git = \"u\", version = \"1\" }").expect_err("unknown");
        assert!(
            unknown.contains("`runtime.version`: unknown key"),
            "{unknown}"
        );
    }

    #[test]
    fn dependencies_render_as_cargo_writes_them() {
        let root = Path::new("/project");
        let git = Runtime::Git(GitSource {
            url: "https://example.com/k.git".to_owned(),
            reference: Some(GitReference::Rev("abc123".to_owned())),
        });
        assert_eq!(
            git.dependency("client", root, Path::new("generated/api")),
            "git = \"https://example.com/k.git\", rev = \"abc123\""
        );
        assert_eq!(
            Runtime::Version("0.1.0".to_owned()).dependency("client", root, Path::new("x")),
            "version = \"0.1.0\""
        );
        assert_eq!(
            Runtime::Workspace.dependency("client", root, Path::new("x")),
            "workspace = true"
        );
    }

    #[test]
    fn runtime_paths_are_relative_to_the_crate_even_when_configured_absolute() {
        let relative = Runtime::Path(PathBuf::from("../kubegen/crates"));
        assert_eq!(
            relative.dependency(
                "cache",
                Path::new("/src/shop"),
                Path::new("generated/listers")
            ),
            "path = \"../../../kubegen/crates/cache\""
        );
        let absolute = Runtime::Path(PathBuf::from("/src/kubegen/crates"));
        assert_eq!(
            absolute.dependency(
                "cache",
                Path::new("/src/shop"),
                Path::new("generated/listers")
            ),
            "path = \"../../../kubegen/crates/cache\""
        );
        let from_current_dir =
            absolute.dependency("cache", Path::new("."), Path::new("generated/listers"));
        assert!(
            from_current_dir.starts_with("path = \"../")
                && from_current_dir.ends_with("/src/kubegen/crates/cache\""),
            "a relative root is made absolute against the current directory: {from_current_dir}"
        );
    }

    #[test]
    fn relative_path_climbs_to_the_common_ancestor() {
        assert_eq!(
            relative_path(Path::new("/a/b/c"), Path::new("/a/d")),
            PathBuf::from("../../d")
        );
        assert_eq!(
            relative_path(Path::new("/a/./b/../b"), Path::new("/a/b/e")),
            PathBuf::from("e")
        );
    }
}
