use super::*;

fn env() -> Environment {
    Environment {
        hostname: "web-0".into(),
        vars: vec![
            ("PATH".into(), "/bin".into()),
            ("MODE".into(), "test".into()),
        ],
        container_id: "abc".into(),
    }
}

/// Runs `argv` with `stdin` (closed after it), returning the exit and (stdout, stderr).
async fn exec(argv: &[&str], stdin: Option<&str>) -> (Exit, String, String) {
    let (output, mut received) = mpsc::channel(64);
    let stdin = stdin.map(|text| {
        let (tx, rx) = mpsc::channel(4);
        tx.try_send(Bytes::from(text.to_owned())).unwrap();
        rx
    });
    let mut stdio = Stdio { stdin, output };
    let argv: Vec<String> = argv.iter().map(|s| (*s).to_owned()).collect();
    let exit = run(&argv, &env(), &mut stdio).await;
    drop(stdio);
    let (mut out, mut err) = (String::new(), String::new());
    while let Some(o) = received.recv().await {
        match o {
            Output::Stdout(b) => out.push_str(std::str::from_utf8(&b).unwrap()),
            Output::Stderr(b) => err.push_str(std::str::from_utf8(&b).unwrap()),
        }
    }
    (exit, out, err)
}

#[tokio::test]
async fn echo_cat_env_and_hostname_write_stdout() {
    assert_eq!(
        exec(&["echo", "a", "b"], None).await,
        (Exit::Code(0), "a b\n".into(), String::new())
    );
    assert_eq!(exec(&["echo", "-n", "x"], None).await.1, "x");
    assert_eq!(exec(&["cat"], Some("in\n")).await.1, "in\n");
    assert_eq!(exec(&["cat", "/etc/hostname"], None).await.1, "web-0\n");
    assert_eq!(exec(&["env"], None).await.1, "PATH=/bin\nMODE=test\n");
    assert_eq!(exec(&["/bin/hostname"], None).await.1, "web-0\n");
    assert_eq!(exec(&["true"], None).await.0, Exit::Code(0));
    assert_eq!(exec(&["false"], None).await.0, Exit::Code(1));
}

#[tokio::test]
async fn cat_of_a_missing_file_fails_on_stderr() {
    assert_eq!(
        exec(&["cat", "/nope"], None).await,
        (
            Exit::Code(1),
            String::new(),
            "cat: /nope: No such file or directory\n".into()
        )
    );
}

#[tokio::test]
async fn sh_c_runs_its_script_and_exits_with_its_code() {
    assert_eq!(exec(&["sh", "-c", "exit 3"], None).await.0, Exit::Code(3));
    assert_eq!(exec(&["sh", "-c", "exit 259"], None).await.0, Exit::Code(3));
    assert_eq!(
        exec(&["sh", "-c", "echo 'one two'; echo err >&2; exit 4"], None).await,
        (Exit::Code(4), "one two\n".into(), "err\n".into())
    );
    assert_eq!(
        exec(&["sh", "-c", "false && echo no || echo yes"], None)
            .await
            .1,
        "yes\n"
    );
    assert_eq!(exec(&["sh", "-c", "false"], None).await.0, Exit::Code(1));
}

#[tokio::test]
async fn an_unknown_command_fails_to_start_outside_a_shell_and_is_127_inside() {
    let (exit, out, _) = exec(&["rm", "-rf", "/"], None).await;
    assert!(out.is_empty());
    let Exit::StartFailed(message) = exit else {
        panic!("{exit:?}");
    };
    assert!(
        message.contains("exec: \"rm\": executable file not found in $PATH"),
        "{message}"
    );
    assert_eq!(
        exec(&["sh", "-c", "rm -rf /"], None).await,
        (Exit::Code(127), String::new(), "sh: rm: not found\n".into())
    );
}

#[tokio::test]
async fn an_interactive_shell_reads_commands_from_stdin() {
    assert_eq!(
        exec(&["sh"], Some("echo hi\nexit 5\necho never\n")).await,
        (Exit::Code(5), "hi\n".into(), String::new())
    );
}

#[tokio::test(start_paused = true)]
async fn sleep_waits_in_virtual_time() {
    let started = tokio::time::Instant::now();
    assert_eq!(exec(&["sleep", "2"], None).await.0, Exit::Code(0));
    assert_eq!(started.elapsed().as_secs(), 2);
    assert_eq!(exec(&["sleep", "x"], None).await.0, Exit::Code(1));
}

#[test]
fn the_log_has_start_lines_and_an_exit_line_once_terminated() {
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"containers": [{"name": "c", "image": "busybox", "command": ["sleep", "1"]}]},
    }))
    .unwrap();
    let container = &pod.spec.as_ref().unwrap().containers[0];
    let started: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    let running = log(&pod, container, started, None);
    let texts: Vec<&str> = running.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "nodesim: container c of pod ns/p started\n",
            "nodesim: image docker.io/library/busybox:latest\n",
            "nodesim: command [sleep 1]\n",
        ]
    );
    let ended: Timestamp = "2026-01-01T00:00:05Z".parse().unwrap();
    let done = log(&pod, container, started, Some((0, ended)));
    assert_eq!(done.len(), 4);
    assert_eq!(done[3].text, "nodesim: container c exited with code 0\n");
    assert_eq!(done[3].at, ended);
}
