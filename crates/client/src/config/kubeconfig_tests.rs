use super::*;

fn parse(yaml: &str, path: &str) -> Kubeconfig {
    Kubeconfig::parse(yaml, Path::new(path)).expect("valid kubeconfig")
}

const FULL: &str = r#"
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: c1
  cluster:
    server: https://1.2.3.4:6443
    certificate-authority: certs/ca.pem
    tls-server-name: api.internal
- name: c2
  cluster:
    server: https://example.com
    insecure-skip-tls-verify: true
users:
- name: u1
  user:
    client-certificate: /abs/client.pem
    client-key: keys/client.key
    tokenFile: token
- name: u2
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./bin/plugin
      args: ["get-token"]
      env: null
- name: u3
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: aws
contexts:
- name: dev
  context: {cluster: c1, user: u1, namespace: team}
preferences: {}
"#;

#[test]
fn parses_every_supported_field() {
    let config = parse(FULL, "/home/me/.kube/config");
    assert_eq!(config.current_context.as_deref(), Some("dev"));
    let c1 = &config.cluster("c1").expect("c1").cluster;
    assert_eq!(c1.server.as_deref(), Some("https://1.2.3.4:6443"));
    assert_eq!(c1.tls_server_name.as_deref(), Some("api.internal"));
    assert!(
        config
            .cluster("c2")
            .expect("c2")
            .cluster
            .insecure_skip_tls_verify
    );
    let u2 = config
        .auth_info("u2")
        .expect("u2")
        .user
        .exec
        .clone()
        .expect("exec");
    assert_eq!(u2.args, ["get-token"]);
    assert!(u2.env.is_empty());
    assert_eq!(
        config
            .context("dev")
            .expect("dev")
            .context
            .namespace
            .as_deref(),
        Some("team")
    );
}

#[test]
fn relative_paths_resolve_against_the_file_directory() {
    let config = parse(FULL, "/home/me/.kube/config");
    let dir = Path::new("/home/me/.kube");
    let c1 = &config.cluster("c1").expect("c1").cluster;
    assert_eq!(
        c1.certificate_authority.as_deref(),
        Some(dir.join("certs/ca.pem").as_path())
    );
    let u1 = &config.auth_info("u1").expect("u1").user;
    assert_eq!(
        u1.client_certificate.as_deref(),
        Some(Path::new("/abs/client.pem"))
    );
    assert_eq!(
        u1.client_key.as_deref(),
        Some(dir.join("keys/client.key").as_path())
    );
    assert_eq!(u1.token_file.as_deref(), Some(dir.join("token").as_path()));
    let exec = |name: &str| {
        config
            .auth_info(name)
            .and_then(|u| u.user.exec.clone())
            .expect("exec")
    };
    assert_eq!(exec("u2").command, "/home/me/.kube/./bin/plugin");
    assert_eq!(
        exec("u3").command,
        "aws",
        "a bare command is looked up in PATH"
    );
}

#[test]
fn every_entry_remembers_its_file() {
    let config = parse(FULL, "/k/a");
    assert!(
        config
            .clusters
            .iter()
            .all(|c| c.origin == Path::new("/k/a"))
    );
    assert!(
        config
            .auth_infos
            .iter()
            .all(|u| u.origin == Path::new("/k/a"))
    );
    assert!(
        config
            .contexts
            .iter()
            .all(|c| c.origin == Path::new("/k/a"))
    );
}

#[test]
fn merge_keeps_the_first_definition_of_each_name() {
    let first = parse(
        "clusters: [{name: shared, cluster: {server: 'https://first'}}]\n\
         users: [{name: me, user: {token: first}}]\n\
         contexts: [{name: ctx, context: {cluster: shared, user: me}}]",
        "/k/first",
    );
    let second = parse(
        "current-context: ctx\n\
         clusters: [{name: shared, cluster: {server: 'https://second'}}, {name: extra, cluster: {server: 'https://extra'}}]\n\
         users: [{name: me, user: {token: second}}]\n\
         contexts: [{name: ctx, context: {cluster: extra}}]",
        "/k/second",
    );
    let merged = first.merge(second);
    assert_eq!(
        merged
            .cluster("shared")
            .and_then(|c| c.cluster.server.clone())
            .as_deref(),
        Some("https://first")
    );
    assert_eq!(
        merged.cluster("extra").map(|c| c.origin.clone()),
        Some(PathBuf::from("/k/second"))
    );
    assert_eq!(
        merged
            .auth_info("me")
            .and_then(|u| u.user.token.clone())
            .as_deref(),
        Some("first")
    );
    assert_eq!(
        merged.context("ctx").map(|c| c.context.cluster.as_str()),
        Some("shared")
    );
    assert_eq!(
        merged.current_context.as_deref(),
        Some("ctx"),
        "taken from the first file that sets it"
    );
    assert_eq!(merged.source.as_deref(), Some(Path::new("/k/first")));
}

#[test]
fn current_context_comes_from_the_first_file_that_sets_it() {
    let a = parse("current-context: a", "/k/a");
    let b = parse("current-context: b", "/k/b");
    assert_eq!(
        a.clone().merge(b.clone()).current_context.as_deref(),
        Some("a")
    );
    let none = parse("clusters: []", "/k/none");
    assert_eq!(none.merge(b).current_context.as_deref(), Some("b"));
}

#[test]
fn read_merged_skips_missing_empty_and_duplicate_files() -> Result<()> {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    std::fs::write(
        &a,
        "current-context: from-a\nclusters: [{name: x, cluster: {server: 'https://a'}}]",
    )
    .expect("write");
    std::fs::write(
        &b,
        "current-context: from-b\nclusters: [{name: y, cluster: {server: 'https://b'}}]",
    )
    .expect("write");
    let list = [
        dir.path().join("missing"),
        PathBuf::new(),
        a.clone(),
        b.clone(),
        a.clone(),
    ];
    let merged = Kubeconfig::read_merged(&list)?.expect("two files exist");
    assert_eq!(merged.current_context.as_deref(), Some("from-a"));
    assert_eq!(merged.clusters.len(), 2);
    assert_eq!(
        Kubeconfig::read_merged(&[dir.path().join("missing")])?,
        None
    );
    Ok(())
}

#[test]
fn malformed_yaml_error_names_file_and_line() {
    let err = Kubeconfig::parse("clusters:\n  - name: [unclosed\n", Path::new("/k/bad"))
        .expect_err("malformed");
    let text = err.to_string();
    assert!(
        text.starts_with("kubeconfig /k/bad: invalid YAML:"),
        "{text}"
    );
    assert!(text.contains("line"), "{text}");
}

#[test]
fn wrong_field_type_is_an_error_not_a_panic() {
    assert!(Kubeconfig::parse("clusters: 5", Path::new("/k/x")).is_err());
    assert!(
        Kubeconfig::parse("users: [{name: u, user: {exec: {}}}]", Path::new("/k/x")).is_err(),
        "exec needs a command"
    );
}

#[test]
fn empty_file_is_an_empty_config() {
    assert_eq!(parse("", "/k/empty").clusters.len(), 0);
}

#[test]
fn debug_output_redacts_tokens() {
    let config = parse(
        "users: [{name: u, user: {token: s3cr3t, client-key-data: a2V5}}]",
        "/k/x",
    );
    let text = format!("{config:?}");
    assert!(!text.contains("s3cr3t") && !text.contains("a2V5"), "{text}");
}
