//! The `kubegen-testserver` binary starts, writes a kubeconfig and prints its URL.
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

#[tokio::test]
async fn binary_prints_its_url_and_writes_a_kubeconfig() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let mut child = Command::new(env!("CARGO_BIN_EXE_kubegen-testserver"))
        .args(["--port", "0", "--kubeconfig-out"])
        .arg(&kubeconfig)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let yaml = std::fs::read_to_string(&kubeconfig).unwrap();
    assert!(yaml.contains(&format!("server: {url}")), "{yaml}");
    let reply = crate::common::Http::new(&url)
        .get("/api/v1/namespaces/default")
        .await;
    assert_eq!(reply.code, 200);
    child.kill().unwrap();
    child.wait().unwrap();
}

/// `--audit-policy-file` and `--audit-log-path -`: audit events on stdout after the URL; a
/// malformed policy stops the start with an error naming the file and the field.
#[tokio::test]
async fn binary_writes_audit_events_to_stdout_and_refuses_a_malformed_policy() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  omitStages: [Later]\n",
    )
    .unwrap();
    let refused = Command::new(env!("CARGO_BIN_EXE_kubegen-testserver"))
        .arg("--audit-policy-file")
        .arg(&bad)
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    let want = format!(
        "Error: audit policy {}: rules[0].omitStages[0]: Invalid value: \"Later\": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic",
        bad.display()
    );
    assert!(stderr.contains(&want), "{stderr}");

    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kubegen-testserver"))
        .args([
            "--port",
            "0",
            "--controller-manager=false",
            "--simulated-nodes",
            "0",
        ])
        .arg("--audit-policy-file")
        .arg(&policy)
        .args(["--audit-log-path", "-"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let url = line.trim().to_string();
    let reply = crate::common::Http::new(&url)
        .get("/api/v1/namespaces/default")
        .await;
    assert_eq!(reply.code, 200);
    let mut stages = Vec::new();
    for _ in 0..2 {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let event: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(event["requestURI"], "/api/v1/namespaces/default");
        stages.push(event["stage"].as_str().unwrap().to_string());
    }
    assert_eq!(stages, ["RequestReceived", "ResponseComplete"]);
    child.kill().unwrap();
    child.wait().unwrap();
}
