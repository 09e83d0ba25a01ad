//! Where codegen reads from and writes to: `kubegen.toml` and its defaults.
//!
//! client-go's code-generator takes a dozen flags per generator; kubegen takes one small file
//! (every key optional) so a project's `scripts/update-codegen.sh` is one line. The defaults are
//! this repository's layout. Relative paths are relative to `root` (the directory of the file).
//!
//! ```toml
//! input = "apis"                      # apis/<group>/<version>/*.rs
//! builtins = "apis/builtins.toml"     # k8s-openapi kinds to cover (optional)
//! output = "crates/generated"         # api/, clientset/, listers/, informers/ go here
//! crd = "deploy/crd.yaml"             # CRD manifests (optional)
//! crd_v1beta1 = "deploy/crd-v1beta1.yaml"  # the same CRDs for API servers < 1.16 (off unless set)
//! boilerplate = "hack/boilerplate.rs.txt"  # license header (optional; none when left out)
//! crate_prefix = "kubegen"            # crate names: <prefix>-api, <prefix>-clientset, ...
//! runtime = "workspace"               # see below
//!
//! [conversion_webhook]                # the Service behind every multi-version CRD's conversion
//! namespace = "kubegen-system"        # default: `<crate_prefix>-system`
//! name = "kubegen-webhook"            # default: `<crate_prefix>-webhook`
//! path = "/convert"                   # default: kubegen-runtime's `CONVERT_PATH`
//! port = 443                          # default: 443
//!
//! [import]                            # `kubegen import` (see `ImportConfig`)
//! crd = "hack/imported-crds.yaml"     # imported kinds' CRDs; never in `crd` (off unless set)
//! ```
//!
//! `conversion_webhook` is written into the `spec.conversion` of each CRD whose kind has several
//! versions (`strategy: Webhook`); CRDs with one version get no `conversion` (the server's default,
//! `None`). A table in the config rather than a marker on the kind: the Service is a deployment
//! decision shared by every kind the operator converts, like controller-gen's kustomize
//! `webhook-service` patch, not a property of one API type. To point a CRD at a URL instead (a
//! webhook outside the cluster, or in tests), rewrite `clientConfig` when installing it.
//!
//! `runtime` says how generated crates depend on kubegen's runtime crates ([`Runtime`], in
//! `runtime.rs`): `workspace` is for crates generated inside kubegen's own workspace; another
//! project uses a git table, `{ git = "<kubegen's repository>", tag = "v0.1.0" }` (or `rev =`,
//! `branch =`, at most one, as in Cargo), or `path:<dir holding kubegen's client/, cache/,
//! fake/>` (a clone of kubegen; written relative to each generated crate, even when configured
//! absolute); `version:<v>` names them by version, which works only once they are published to a
//! registry the project uses (crates.io, once they are published there).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::runtime::Runtime;

/// Everything a generation run needs to know.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct Config {
    /// Directory all other relative paths are resolved against (not read from the file).
    #[serde(skip)]
    pub root: PathBuf,
    /// Input packages: `<input>/<group>/<version>/*.rs`.
    pub input: PathBuf,
    /// Built-in kinds list; skipped when absent from disk.
    pub builtins: Option<PathBuf>,
    /// Parent directory of the generated crates.
    pub output: PathBuf,
    /// CRD manifest file; `None` skips CRD generation.
    pub crd: Option<PathBuf>,
    /// The same CRDs as apiextensions.k8s.io/v1beta1, for API servers older than 1.16 (which do
    /// not serve v1); `None` (the default) skips it. Off by default so that projects which only
    /// target 1.16+ do not get a file they did not ask for.
    pub crd_v1beta1: Option<PathBuf>,
    /// License header prepended to every generated Rust and TOML file; `None` (the default)
    /// writes none. A file that is named but missing is an error.
    pub boilerplate: Option<PathBuf>,
    /// Generated crate names are `<prefix>-api`, `<prefix>-clientset`, ...
    pub crate_prefix: String,
    /// How generated crates depend on kubegen's runtime and on third-party crates.
    pub runtime: Runtime,
    /// The Service multi-version CRDs name for conversion.
    pub conversion_webhook: ConversionWebhook,
    /// `kubegen import`'s settings.
    pub import: ImportConfig,
}

/// `[import]`: how `kubegen import` names types and where it stops following a schema.
///
/// ```toml
/// [import]
/// max_depth = 64                                   # deeper nodes become serde_json::Value
/// rename = { "Gateway.spec.listeners" = "Listener" }  # type path -> Rust name
/// crd = "hack/imported-crds.yaml"                  # the imported CRDs as generated (optional)
/// ```
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct ImportConfig {
    /// Type names by path (`<Kind>.<json field>.<json field>`, list items and map values add no
    /// segment), instead of the path in PascalCase.
    pub rename: std::collections::BTreeMap<String, String>,
    /// Schema nodes deeper than this become free JSON (`serde_json::Value`).
    pub max_depth: usize,
    /// Where the generator writes the imported kinds' CRDs, to compare with the input; they are
    /// never in `crd`/`crd_v1beta1`, as the project that owns them installs them. Off unless set.
    pub crd: Option<PathBuf>,
}

impl Default for ImportConfig {
    fn default() -> Self {
        ImportConfig {
            rename: std::collections::BTreeMap::new(),
            max_depth: 64,
            crd: None,
        }
    }
}

/// The Service a multi-version CRD's `conversion.webhook.clientConfig.service` names (see the
/// module docs); every key is optional.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct ConversionWebhook {
    /// The Service's namespace; `<crate_prefix>-system` when left out.
    pub namespace: Option<String>,
    /// The Service's name; `<crate_prefix>-webhook` when left out.
    pub name: Option<String>,
    /// The HTTP path; `/convert` (kubegen-runtime's `CONVERT_PATH`) when left out.
    pub path: Option<String>,
    /// The Service port; 443 when left out.
    pub port: Option<u16>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            root: PathBuf::from("."),
            input: PathBuf::from("apis"),
            builtins: Some(PathBuf::from("apis/builtins.toml")),
            output: PathBuf::from("crates/generated"),
            crd: Some(PathBuf::from("deploy/crd.yaml")),
            crd_v1beta1: None,
            boilerplate: None,
            crate_prefix: "kubegen".to_owned(),
            runtime: Runtime::Workspace,
            conversion_webhook: ConversionWebhook::default(),
            import: ImportConfig::default(),
        }
    }
}

impl Config {
    /// Reads `path` (a `kubegen.toml`); its directory becomes `root`.
    ///
    /// # Errors
    /// The file cannot be read or is not valid config TOML.
    pub fn load(path: &Path) -> Result<Config, crate::Error> {
        let text = std::fs::read_to_string(path).map_err(|source| crate::Error::ReadConfig {
            path: path.to_path_buf(),
            source,
        })?;
        let mut config: Config =
            toml::from_str(&text).map_err(|error| crate::Error::BadConfig {
                path: path.to_path_buf(),
                message: error.to_string(),
            })?;
        config.root = path
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        if config.root.as_os_str().is_empty() {
            config.root = PathBuf::from(".");
        }
        Ok(config)
    }

    /// `path` resolved against `root`.
    pub(crate) fn resolve(&self, path: &Path) -> PathBuf {
        self.root.join(path)
    }

    /// Name of one generated crate: `kubegen-api`.
    pub(crate) fn crate_name(&self, part: &str) -> String {
        format!("{}-{part}", self.crate_prefix)
    }

    /// `(namespace, name, path, port)` of the conversion webhook Service, defaults filled in.
    pub(crate) fn conversion_service(&self) -> (String, String, String, u16) {
        let webhook = &self.conversion_webhook;
        let prefix = &self.crate_prefix;
        (
            webhook
                .namespace
                .clone()
                .unwrap_or_else(|| format!("{prefix}-system")),
            webhook
                .name
                .clone()
                .unwrap_or_else(|| format!("{prefix}-webhook")),
            webhook
                .path
                .clone()
                .unwrap_or_else(|| "/convert".to_owned()),
            webhook.port.unwrap_or(443),
        )
    }

    /// Rust name of one generated crate: `kubegen_api`.
    pub(crate) fn crate_ident(&self, part: &str) -> proc_macro2::Ident {
        crate::names::ident(&self.crate_name(part).replace('-', "_"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_without_boilerplate_writes_no_header_and_needs_no_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("kubegen.toml");
        std::fs::write(&file, "output = \"generated\"\n").expect("write");
        let config = Config::load(&file).expect("valid config");
        assert_eq!(config.boilerplate, None);
        assert_eq!(config.output, PathBuf::from("generated"));
    }

    #[test]
    fn a_named_boilerplate_file_that_is_missing_is_an_error() {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = Config {
            root: dir.path().to_path_buf(),
            builtins: None,
            boilerplate: Some(PathBuf::from("hack/boilerplate.rs.txt")),
            ..Config::default()
        };
        std::fs::create_dir_all(dir.path().join("apis")).expect("mkdir");
        let error = crate::generate(&config).expect_err("must fail");
        assert!(
            matches!(&error, crate::Error::ReadBoilerplate { path, .. } if path.ends_with("hack/boilerplate.rs.txt")),
            "{error}"
        );
    }

    #[test]
    fn a_bad_runtime_table_names_the_file_and_the_key() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("kubegen.toml");
        std::fs::write(
            &file,
            "runtime = { git = \"u\", tag = \"a\", rev = \"b\" }\n",
        )
        .expect("write");
        let error = Config::load(&file).expect_err("two references").to_string();
        assert!(error.contains("kubegen.toml"), "{error}");
        assert!(error.contains("`runtime`: give at most one of"), "{error}");
    }
}
