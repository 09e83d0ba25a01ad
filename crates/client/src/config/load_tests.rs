use super::*;

/// A temp dir with kubeconfig files named after the server each one points at.
struct Files {
    dir: tempfile::TempDir,
}

impl Files {
    fn new() -> Files {
        Files {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    /// Writes a kubeconfig with one context `name` pointing at `https://name`.
    fn kubeconfig(&self, file: &str, name: &str, current: bool) -> PathBuf {
        let path = self.dir.path().join(file);
        let current = if current {
            format!("current-context: {name}\n")
        } else {
            String::new()
        };
        let yaml = format!(
            "{current}clusters: [{{name: {name}, cluster: {{server: 'https://{name}', insecure-skip-tls-verify: true}}}}]\n\
             contexts: [{{name: {name}, context: {{cluster: {name}, namespace: ns-{name}}}}}]\n"
        );
        std::fs::write(&path, yaml).expect("write kubeconfig");
        path
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
}

fn server(config: &Config) -> String {
    config.cluster_url().host().unwrap_or_default().to_owned()
}

#[test]
fn explicit_path_beats_kubeconfig_env_and_home() -> Result<()> {
    let files = Files::new();
    let explicit = files.kubeconfig("explicit", "explicit", true);
    let env_file = files.kubeconfig("env", "env", true);
    let env = Environment {
        kubeconfig: Some(env_file.into()),
        home: Some(files.path("")),
        ..Default::default()
    };
    let config = load_with_env(&LoadOptions::default().kubeconfig_path(explicit), &env)?;
    assert_eq!(server(&config), "explicit");
    Ok(())
}

#[test]
fn explicit_path_must_exist() {
    let err = load_with_env(
        &LoadOptions::default().kubeconfig_path("/nonexistent/kc"),
        &Environment::default(),
    )
    .expect_err("missing explicit file");
    assert!(
        err.to_string()
            .starts_with("kubeconfig /nonexistent/kc: cannot read"),
        "{err}"
    );
}

#[test]
fn kubeconfig_env_list_is_merged_first_wins() -> Result<()> {
    let files = Files::new();
    let a = files.kubeconfig("a", "a", false);
    let b = files.kubeconfig("b", "b", true);
    let list = std::env::join_paths([files.path("missing"), a, b]).expect("join");
    let env = Environment {
        kubeconfig: Some(list),
        ..Default::default()
    };
    let config = load_with_env(&LoadOptions::default(), &env)?;
    assert_eq!(
        server(&config),
        "b",
        "current-context from b, the first file setting it"
    );
    let config = load_with_env(&LoadOptions::default().context("a"), &env)?;
    assert_eq!(
        server(&config),
        "a",
        "contexts of every listed file are available"
    );
    assert_eq!(config.default_namespace(), "ns-a");
    Ok(())
}

#[test]
fn kubeconfig_env_beats_home() -> Result<()> {
    let files = Files::new();
    std::fs::create_dir_all(files.path(".kube")).expect("mkdir");
    files.kubeconfig(".kube/config", "home", true);
    let env_file = files.kubeconfig("env", "env", true);
    let env = Environment {
        kubeconfig: Some(env_file.into()),
        home: Some(files.path("")),
        ..Default::default()
    };
    assert_eq!(
        server(&load_with_env(&LoadOptions::default(), &env)?),
        "env"
    );
    Ok(())
}

#[test]
fn home_config_is_used_without_kubeconfig_env() -> Result<()> {
    let files = Files::new();
    std::fs::create_dir_all(files.path(".kube")).expect("mkdir");
    files.kubeconfig(".kube/config", "home", true);
    let env = Environment {
        home: Some(files.path("")),
        ..Default::default()
    };
    assert_eq!(
        server(&load_with_env(&LoadOptions::default(), &env)?),
        "home"
    );
    Ok(())
}

#[test]
fn in_cluster_is_the_last_resort() -> Result<()> {
    let files = Files::new();
    std::fs::write(files.path("token"), "t").expect("write");
    std::fs::write(files.path("ca.crt"), "PEM").expect("write");
    let env = Environment {
        home: Some(files.path("no-home")),
        service_host: Some("10.96.0.1".into()),
        service_port: Some("443".into()),
        ..Default::default()
    };
    let opts = LoadOptions::default().in_cluster(InClusterPaths::in_dir(files.path("")));
    assert_eq!(server(&load_with_env(&opts, &env)?), "10.96.0.1");
    Ok(())
}

#[test]
fn nothing_configured_names_what_was_tried() {
    let env = Environment {
        home: Some(PathBuf::from("/nonexistent-home")),
        ..Default::default()
    };
    let err = load_with_env(&LoadOptions::default(), &env).expect_err("nothing configured");
    let text = err.to_string();
    assert!(text.contains("/nonexistent-home/.kube/config"), "{text}");
    assert!(text.contains("KUBERNETES_SERVICE_HOST"), "{text}");
}

#[test]
fn master_url_overrides_server_or_stands_alone() -> Result<()> {
    let files = Files::new();
    let kc = files.kubeconfig("kc", "kc", true);
    let opts = LoadOptions::default()
        .kubeconfig_path(kc)
        .master_url("https://override:8443");
    assert_eq!(
        server(&load_with_env(&opts, &Environment::default())?),
        "override"
    );
    let env = Environment {
        home: Some(files.path("no-home")),
        ..Default::default()
    };
    let config = load_with_env(
        &LoadOptions::default().master_url("http://127.0.0.1:8080"),
        &env,
    )?;
    assert_eq!(config.cluster_url().to_string(), "http://127.0.0.1:8080/");
    Ok(())
}

fn from_yaml(yaml: &str, opts: &LoadOptions) -> Result<Config> {
    Config::from_kubeconfig(&Kubeconfig::parse(yaml, Path::new("/k/config"))?, opts)
}

#[test]
fn unknown_context_cluster_or_user_is_named() {
    let yaml = "current-context: a\ncontexts: [{name: a, context: {cluster: nope, user: ghost}}]";
    let err = from_yaml(yaml, &LoadOptions::default().context("zzz")).expect_err("unknown context");
    assert_eq!(
        err.to_string(),
        "kubeconfig /k/config: context \"zzz\" not found"
    );
    let err = from_yaml(yaml, &LoadOptions::default()).expect_err("unknown cluster");
    assert_eq!(
        err.to_string(),
        "kubeconfig /k/config: context \"a\": cluster \"nope\" not found"
    );
    let err = from_yaml(
        &format!("{yaml}\nclusters: [{{name: nope, cluster: {{server: 'http://x'}}}}]"),
        &LoadOptions::default(),
    )
    .expect_err("unknown user");
    assert_eq!(
        err.to_string(),
        "kubeconfig /k/config: context \"a\": user \"ghost\" not found"
    );
    let err = from_yaml("clusters: []", &LoadOptions::default()).expect_err("no current context");
    assert!(err.to_string().contains("no current-context"), "{err}");
}

const BASE: &str = "current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n";

#[test]
fn proxy_url_is_rejected_with_the_field_name() {
    let yaml = format!(
        "{BASE}clusters: [{{name: c, cluster: {{server: 'https://x', proxy-url: 'http://proxy:3128'}}}}]\nusers: [{{name: u}}]"
    );
    let err = from_yaml(&yaml, &LoadOptions::default()).expect_err("proxy");
    assert!(
        err.to_string().contains("clusters[c].cluster.proxy-url"),
        "{err}"
    );
}

#[test]
fn unreadable_certificate_file_is_named() {
    let yaml = format!(
        "{BASE}clusters: [{{name: c, cluster: {{server: 'https://x', certificate-authority: /nope/ca.pem}}}}]\nusers: [{{name: u}}]"
    );
    let err = from_yaml(&yaml, &LoadOptions::default()).expect_err("missing CA file");
    assert!(
        err.to_string()
            .contains("clusters[c].cluster.certificate-authority: cannot read /nope/ca.pem"),
        "{err}"
    );
    let yaml = format!(
        "{BASE}clusters: [{{name: c, cluster: {{server: 'https://x'}}}}]\nusers: [{{name: u, user: {{client-certificate-data: '!!notbase64', client-key-data: a2V5}}}}]"
    );
    let err = from_yaml(&yaml, &LoadOptions::default()).expect_err("bad base64");
    assert!(
        err.to_string()
            .contains("users[u].user.client-certificate-data: invalid base64"),
        "{err}"
    );
}

#[test]
fn data_fields_win_over_files_and_token_wins_over_token_file() -> Result<()> {
    let yaml = format!(
        "{BASE}clusters: [{{name: c, cluster: {{server: 'https://x', certificate-authority-data: Q0E=, certificate-authority: /nope}}}}]\n\
         users: [{{name: u, user: {{token: tok, tokenFile: /nope}}}}]"
    );
    let config = from_yaml(&yaml, &LoadOptions::default())?;
    assert_eq!(config.tls.ca_pem.as_deref(), Some(b"CA".as_slice()));
    assert!(matches!(&config.auth, Auth::Token(t) if t.expose() == "tok"));
    assert_eq!(config.default_namespace(), "default");
    Ok(())
}

#[test]
fn client_cert_without_key_is_rejected() {
    let yaml = format!(
        "{BASE}clusters: [{{name: c, cluster: {{server: 'https://x'}}}}]\nusers: [{{name: u, user: {{client-certificate-data: Q0E=}}}}]"
    );
    let err = from_yaml(&yaml, &LoadOptions::default()).expect_err("cert without key");
    assert!(err.to_string().contains("must be set together"), "{err}");
}

#[test]
fn legacy_auth_provider_is_rejected() {
    let yaml = format!(
        "{BASE}clusters: [{{name: c, cluster: {{server: 'https://x'}}}}]\nusers: [{{name: u, user: {{auth-provider: {{name: gcp}}}}}}]"
    );
    let err = from_yaml(&yaml, &LoadOptions::default()).expect_err("auth-provider");
    assert!(
        err.to_string().contains("users[u].user.auth-provider"),
        "{err}"
    );
}

#[test]
fn server_without_scheme_is_rejected() {
    let yaml = format!(
        "{BASE}clusters: [{{name: c, cluster: {{server: 'localhost:6443'}}}}]\nusers: [{{name: u}}]"
    );
    let err = from_yaml(&yaml, &LoadOptions::default()).expect_err("no scheme");
    assert!(
        err.to_string().contains("clusters[c].cluster.server"),
        "{err}"
    );
}

#[test]
fn debug_of_config_never_shows_the_token() -> Result<()> {
    let yaml = format!(
        "{BASE}clusters: [{{name: c, cluster: {{server: 'https://x'}}}}]\nusers: [{{name: u, user: {{token: s3cr3t}}}}]"
    );
    let config = from_yaml(&yaml, &LoadOptions::default())?;
    assert!(!format!("{config:?}").contains("s3cr3t"));
    Ok(())
}
