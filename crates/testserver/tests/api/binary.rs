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
