use super::*;
use crate::config::kubeconfig::ExecEnvVar;
use std::path::{Path, PathBuf};

/// A plugin script that counts its runs in `count`, saves its environment and arguments, and
/// prints a token `tok-<run number>` expiring at `$EXPIRY` (no expiry when empty).
const PLUGIN: &str = r#"
echo run >> "$DIR/count"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$DIR/info"
printf '%s' "$*" > "$DIR/args"
n=$(wc -l < "$DIR/count" | tr -d ' ')
if [ -n "$EXPIRY" ]; then exp=",\"expirationTimestamp\":\"$EXPIRY\""; else exp=""; fi
printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"token":"tok-%s"%s}}' "$API" "$n" "$exp"
"#;

struct Plugin {
    dir: tempfile::TempDir,
}

impl Plugin {
    fn new(script: &str) -> Plugin {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("plugin.sh"), script).expect("write plugin");
        Plugin { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The exec config running the script through `/bin/sh` (no exec bit needed).
    fn config(&self, api: &str, expiry: &str) -> ExecConfig {
        let var = |name: &str, value: &str| ExecEnvVar {
            name: name.into(),
            value: value.into(),
        };
        ExecConfig {
            api_version: Some(api.into()),
            command: "/bin/sh".into(),
            args: vec![
                self.path("plugin.sh").display().to_string(),
                "--flag".into(),
            ],
            env: vec![
                var("DIR", &self.dir.path().display().to_string()),
                var("EXPIRY", expiry),
                var("API", api),
            ],
            ..ExecConfig::default()
        }
    }

    fn runs(&self) -> usize {
        std::fs::read_to_string(self.path("count"))
            .map(|s| s.lines().count())
            .unwrap_or(0)
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_default()
    }
}

const V1: &str = "client.authentication.k8s.io/v1";
const V1BETA1: &str = "client.authentication.k8s.io/v1beta1";

/// The plugin's token, which the script always prints.
async fn token(exec: &ExecAuth) -> Result<String> {
    Ok(exec
        .token()
        .await?
        .map(|t| t.expose().to_owned())
        .unwrap_or_default())
}

fn auth(config: ExecConfig) -> ExecAuth {
    ExecAuth::new(config, &Cluster::default(), None).expect("valid exec config")
}

#[tokio::test]
async fn token_without_expiry_is_cached() -> Result<()> {
    let plugin = Plugin::new(PLUGIN);
    let exec = auth(plugin.config(V1, ""));
    assert_eq!(token(&exec).await?, "tok-1");
    assert_eq!(token(&exec).await?, "tok-1");
    assert_eq!(plugin.runs(), 1);
    Ok(())
}

#[tokio::test]
async fn token_is_cached_until_expiration() -> Result<()> {
    let plugin = Plugin::new(PLUGIN);
    let exec = auth(plugin.config(V1BETA1, "2999-01-01T00:00:00Z"));
    exec.token().await?;
    assert_eq!(token(&exec).await?, "tok-1");
    assert_eq!(plugin.runs(), 1);
    Ok(())
}

#[tokio::test]
async fn expired_token_runs_the_plugin_again() -> Result<()> {
    let plugin = Plugin::new(PLUGIN);
    let exec = auth(plugin.config(V1, "2000-01-01T00:00:00Z"));
    assert_eq!(token(&exec).await?, "tok-1");
    assert_eq!(token(&exec).await?, "tok-2");
    assert_eq!(plugin.runs(), 2);
    Ok(())
}

#[tokio::test]
async fn invalidate_after_401_runs_the_plugin_again() -> Result<()> {
    let plugin = Plugin::new(PLUGIN);
    let exec = auth(plugin.config(V1, ""));
    exec.token().await?;
    exec.invalidate();
    assert_eq!(token(&exec).await?, "tok-2");
    Ok(())
}

#[tokio::test]
async fn plugin_gets_args_env_and_exec_info_with_cluster() -> Result<()> {
    let plugin = Plugin::new(PLUGIN);
    let mut config = plugin.config(V1, "");
    config.provide_cluster_info = true;
    let cluster = Cluster {
        server: Some("https://k8s:6443".into()),
        ..Cluster::default()
    };
    let exec = ExecAuth::new(config, &cluster, Some(b"CA"))?;
    exec.token().await?;
    assert_eq!(
        plugin.read("args"),
        "--flag",
        "arguments after the script path"
    );
    let info: serde_json::Value =
        serde_json::from_str(&plugin.read("info")).expect("exec info is JSON");
    assert_eq!(info["apiVersion"], V1);
    assert_eq!(info["kind"], "ExecCredential");
    assert_eq!(info["spec"]["interactive"], false);
    assert_eq!(info["spec"]["cluster"]["server"], "https://k8s:6443");
    assert_eq!(
        info["spec"]["cluster"]["certificate-authority-data"],
        "Q0E="
    );
    Ok(())
}

#[tokio::test]
async fn the_clusters_exec_extension_reaches_the_plugin_as_its_config() -> Result<()> {
    let plugin = Plugin::new(PLUGIN);
    let mut config = plugin.config(V1, "");
    config.provide_cluster_info = true;
    let yaml = "server: https://k8s:6443\nextensions:\n- name: other\n  extension: {ignored: true}\n- name: client.authentication.k8s.io/exec\n  extension: {clusterName: spoke-1}\n";
    let cluster: Cluster = serde_yaml::from_str(yaml).expect("a cluster entry");
    let exec = ExecAuth::new(config, &cluster, None)?;
    exec.token().await?;
    let info: serde_json::Value =
        serde_json::from_str(&plugin.read("info")).expect("exec info is JSON");
    assert_eq!(
        info["spec"]["cluster"]["config"],
        serde_json::json!({"clusterName": "spoke-1"})
    );
    Ok(())
}

#[tokio::test]
async fn failing_plugin_reports_status_and_stderr() {
    let plugin = Plugin::new("echo 'token expired, run login' >&2; exit 3");
    let err = auth(plugin.config(V1, ""))
        .token()
        .await
        .expect_err("plugin fails");
    let text = err.to_string();
    assert!(text.starts_with("exec plugin \"/bin/sh\":"), "{text}");
    assert!(
        text.contains("exit status: 3") && text.contains("token expired, run login"),
        "{text}"
    );
}

#[tokio::test]
async fn garbage_output_is_an_error_naming_the_plugin() {
    let plugin = Plugin::new("echo not json");
    let err = auth(plugin.config(V1, ""))
        .token()
        .await
        .expect_err("garbage");
    assert!(
        err.to_string().contains("stdout is not an ExecCredential"),
        "{err}"
    );
}

/// A plugin that prints `status` (a JSON object) as its ExecCredential's status.
fn status_plugin(status: &serde_json::Value) -> Plugin {
    let plugin = Plugin::new(r#"cat "$DIR/credential.json""#);
    let credential =
        serde_json::json!({"apiVersion": V1, "kind": "ExecCredential", "status": status});
    std::fs::write(plugin.path("credential.json"), credential.to_string()).expect("write");
    plugin
}

/// A self-signed client certificate and its key, as PEM.
fn client_certificate() -> (String, String) {
    let key = rcgen::KeyPair::generate().expect("key");
    let cert = rcgen::CertificateParams::new(vec!["client".to_owned()])
        .expect("params")
        .self_signed(&key)
        .expect("certificate");
    (cert.pem(), key.serialize_pem())
}

#[tokio::test]
async fn certificate_only_plugin_fills_the_tls_slot_and_sends_no_token() -> Result<()> {
    use rustls::client::ResolvesClientCert;
    let (cert, key) = client_certificate();
    let plugin =
        status_plugin(&serde_json::json!({"clientCertificateData": cert, "clientKeyData": key}));
    let exec = auth(plugin.config(V1, ""));
    assert!(
        !exec.client_cert().has_certs(),
        "empty before the plugin ran"
    );
    assert!(exec.token().await?.is_none());
    let resolved = exec.client_cert().resolve(&[], &[]).expect("a certificate");
    assert_eq!(resolved.cert.len(), 1);
    Ok(())
}

#[tokio::test]
async fn half_a_certificate_or_nothing_at_all_is_an_error() {
    let (cert, key) = client_certificate();
    for (status, expected) in [
        (
            serde_json::json!({"clientCertificateData": cert}),
            "clientCertificateData but no clientKeyData",
        ),
        (
            serde_json::json!({"clientKeyData": key}),
            "clientKeyData but no clientCertificateData",
        ),
        (
            serde_json::json!({"clientCertificateData": key, "clientKeyData": cert}),
            "clientCertificateData",
        ),
        (
            serde_json::json!({}),
            "neither a token nor a client certificate",
        ),
    ] {
        let plugin = status_plugin(&status);
        let err = auth(plugin.config(V1, ""))
            .token()
            .await
            .expect_err("unusable credential");
        assert!(err.to_string().contains(expected), "{status}: {err}");
    }
}

#[tokio::test]
async fn mismatched_api_version_is_rejected() {
    let plugin = Plugin::new(PLUGIN);
    let mut config = plugin.config(V1, "");
    config.env.retain(|v| v.name != "API");
    config.env.push(ExecEnvVar {
        name: "API".into(),
        value: V1BETA1.into(),
    });
    let err = auth(config).token().await.expect_err("version mismatch");
    assert!(err.to_string().contains("apiVersion"), "{err}");
}

#[tokio::test]
async fn missing_command_shows_the_install_hint() {
    let config = ExecConfig {
        api_version: Some(V1.into()),
        command: "/nonexistent/kubegen-plugin".into(),
        install_hint: Some("install it with brew".into()),
        ..ExecConfig::default()
    };
    let err = auth(config).token().await.expect_err("missing command");
    assert!(
        err.to_string()
            .contains("command not found (install it with brew)"),
        "{err}"
    );
}

#[test]
fn unsupported_api_version_and_interactive_always_are_rejected() {
    let config = |api: &str, mode: Option<&str>| ExecConfig {
        api_version: Some(api.into()),
        command: "x".into(),
        interactive_mode: mode.map(Into::into),
        ..ExecConfig::default()
    };
    assert!(
        ExecAuth::new(
            config("client.authentication.k8s.io/v1alpha1", None),
            &Cluster::default(),
            None
        )
        .is_err()
    );
    assert!(ExecAuth::new(config(V1, Some("Always")), &Cluster::default(), None).is_err());
    assert!(ExecAuth::new(config(V1, Some("IfAvailable")), &Cluster::default(), None).is_ok());
}

#[test]
fn relative_plugin_path_is_resolved_from_the_kubeconfig() -> Result<()> {
    let yaml = "users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: bin/p}}}]";
    let kc = crate::config::Kubeconfig::parse(yaml, Path::new("/etc/kube/config"))?;
    let exec = kc
        .auth_info("u")
        .and_then(|u| u.user.exec.clone())
        .expect("exec");
    assert_eq!(exec.command, "/etc/kube/bin/p");
    Ok(())
}
