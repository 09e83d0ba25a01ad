//! The simulated processes of a container: what its log holds and what `exec` and `attach` run,
//! without ever starting a host process.
//!
//! A real kubelet asks the container runtime (CRI `ExecSync`/`Exec`/`Attach`/`ReadLogs`, served
//! by containerd) to run a command inside the container's namespaces. A simulated container has
//! no namespaces, so running the asked command on the host would run it *on the test machine*.
//! Instead a small built-in set is interpreted here: `echo`, `cat` (stdin, `/etc/hostname`,
//! `/etc/hosts`), `env`/`printenv`, `hostname`, `true`, `false`, `sleep`, and `sh -c` with a
//! script of those joined by `;`, `&&` or `||`, plus `exit N` and `>&2`. A command outside the set
//! fails the way containerd fails one missing from the image: outside a shell the exec does not
//! start (the runtime's error on the error channel); inside `sh -c` the shell answers
//! `sh: NAME: not found` and exit code 127.
//!
//! The log is deterministic (the same Pod and container give the same lines): a few start lines
//! stamped with the container's `startedAt`, and an exit line once it has terminated.

use bytes::Bytes;
use k8s_openapi::api::core::v1::{Container, Pod};
use k8s_openapi::jiff::Timestamp;
use tokio::sync::mpsc;

/// A command's output, in the order written.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Output {
    /// Bytes on standard output.
    Stdout(Bytes),
    /// Bytes on standard error.
    Stderr(Bytes),
}

/// How a simulated command ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Exit {
    /// It ran and exited with this code.
    Code(u8),
    /// It could not start (`command` is not in the built-in set): the runtime's error text.
    StartFailed(String),
}

/// The process's standard streams: stdin is `None` when not connected (reads see end of file).
pub(crate) struct Stdio {
    /// Standard input, chunk by chunk; a closed channel is end of file.
    pub(crate) stdin: Option<mpsc::Receiver<Bytes>>,
    /// Standard output and error; a dropped receiver discards what is written.
    pub(crate) output: mpsc::Sender<Output>,
}

impl Stdio {
    async fn stdout(&self, bytes: impl Into<Bytes>) {
        let _ = self.output.send(Output::Stdout(bytes.into())).await;
    }

    async fn stderr(&self, bytes: impl Into<Bytes>) {
        let _ = self.output.send(Output::Stderr(bytes.into())).await;
    }

    /// Copies stdin to stdout until end of file (`cat`, an attached main process).
    pub(crate) async fn echo_stdin(&mut self) {
        let Some(stdin) = self.stdin.as_mut() else {
            return;
        };
        while let Some(chunk) = stdin.recv().await {
            let _ = self.output.send(Output::Stdout(chunk)).await;
        }
    }
}

/// What a command sees of its container: the Pod's name as hostname, the container's
/// environment.
pub(crate) struct Environment {
    /// `hostname`, the content of `/etc/hostname`.
    pub(crate) hostname: String,
    /// `NAME=value` pairs in the order `env` prints them.
    pub(crate) vars: Vec<(String, String)>,
    /// The container runtime's id of the container (in start failures).
    pub(crate) container_id: String,
}

impl Environment {
    /// The environment of `container` in `pod`: `PATH`, `HOSTNAME`, then the container's `env`
    /// entries with a literal `value` (references to Secrets and fields are not resolved).
    pub(crate) fn of(pod: &Pod, container: &Container) -> Environment {
        let hostname = pod.metadata.name.clone().unwrap_or_default();
        let mut vars = vec![
            (
                "PATH".to_owned(),
                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_owned(),
            ),
            ("HOSTNAME".to_owned(), hostname.clone()),
        ];
        for var in container.env.iter().flatten() {
            if let Some(value) = &var.value {
                vars.push((var.name.clone(), value.clone()));
            }
        }
        let uid = pod.metadata.uid.as_deref().unwrap_or_default();
        let container_id = crate::node::hex_id(&format!("{uid}/{}", container.name), 64);
        Environment {
            hostname,
            vars,
            container_id,
        }
    }

    fn file(&self, path: &str) -> Option<String> {
        match path {
            "/etc/hostname" => Some(format!("{}\n", self.hostname)),
            "/etc/hosts" => Some(format!(
                "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n{}\n",
                self.hostname
            )),
            _ => None,
        }
    }
}

/// Runs `argv` as `exec` would, writing to `stdio`.
pub(crate) async fn run(argv: &[String], env: &Environment, stdio: &mut Stdio) -> Exit {
    let Some(name) = argv.first() else {
        return Exit::StartFailed("command is empty".to_owned());
    };
    if name == "sh" || name == "/bin/sh" || name == "bash" || name == "/bin/bash" {
        return match argv.get(1..) {
            Some([flag, script, ..]) if flag == "-c" => Exit::Code(shell(script, env, stdio).await),
            // An interactive shell: it reads commands from stdin, one per line.
            _ => Exit::Code(interactive_shell(env, stdio).await),
        };
    }
    match builtin(argv, env, stdio).await {
        Some(code) => Exit::Code(code),
        None => Exit::StartFailed(format!(
            "failed to exec in container: failed to start exec \"{}\": OCI runtime exec failed: \
             exec failed: unable to start container process: exec: \"{name}\": executable file \
             not found in $PATH: unknown",
            env.container_id
        )),
    }
}

/// A built-in command's exit code, or `None` when `argv[0]` is not one.
async fn builtin(argv: &[String], env: &Environment, stdio: &mut Stdio) -> Option<u8> {
    let (name, args) = argv.split_first()?;
    let program = name.rsplit('/').next().unwrap_or(name);
    Some(match program {
        "true" => 0,
        "false" => 1,
        "echo" => {
            let (newline, words) = match args.split_first() {
                Some((flag, rest)) if flag == "-n" => (false, rest),
                _ => (true, args),
            };
            let mut text = words.join(" ");
            if newline {
                text.push('\n');
            }
            stdio.stdout(text).await;
            0
        }
        "hostname" => {
            stdio.stdout(format!("{}\n", env.hostname)).await;
            0
        }
        "env" | "printenv" => {
            let text: String = env.vars.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
            stdio.stdout(text).await;
            0
        }
        "cat" => cat(args, env, stdio).await,
        "sleep" => {
            let Some(seconds) = args.first().and_then(|s| s.parse::<f64>().ok()) else {
                stdio.stderr("sleep: invalid number\n").await;
                return Some(1);
            };
            let seconds = seconds.clamp(0.0, 24.0 * 3600.0);
            tokio::time::sleep(std::time::Duration::from_secs_f64(seconds)).await;
            0
        }
        _ => return None,
    })
}

async fn cat(files: &[String], env: &Environment, stdio: &mut Stdio) -> u8 {
    if files.is_empty() || files.iter().all(|f| f == "-") {
        stdio.echo_stdin().await;
        return 0;
    }
    let mut code = 0;
    for file in files {
        match env.file(file) {
            Some(content) => stdio.stdout(content).await,
            None => {
                stdio
                    .stderr(format!("cat: {file}: No such file or directory\n"))
                    .await;
                code = 1;
            }
        }
    }
    code
}

/// How one command of a script is joined to the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Join {
    /// `;` or the end: run the next one whatever happened.
    Always,
    /// `&&`: run the next one if this one succeeded.
    IfSuccess,
    /// `||`: run the next one if this one failed.
    IfFailure,
}

/// Runs a `sh -c` script: commands joined by `;`, `&&`, `||`; `exit N`; `>&2` sends a command's
/// output to stderr. The exit code is the last command's, as in `sh`.
async fn shell(script: &str, env: &Environment, stdio: &mut Stdio) -> u8 {
    let mut code = 0;
    let mut run_next = true;
    for (words, join) in parse_script(script) {
        if run_next && !words.is_empty() {
            match words.first().map(String::as_str) {
                Some("exit") => return exit_code(words.get(1), code),
                _ => code = shell_command(&words, env, stdio).await,
            }
        }
        run_next = match join {
            Join::Always => true,
            Join::IfSuccess => code == 0,
            Join::IfFailure => code != 0,
        };
    }
    code
}

/// The code of `exit ARG`: the last command's without an argument, the low byte of a number
/// (as the kernel keeps of a status), 2 for anything else (`sh`'s "Illegal number").
fn exit_code(arg: Option<&String>, last: u8) -> u8 {
    match arg {
        None => last,
        Some(n) => n.parse::<i64>().map_or(2, |n| (n & 0xff) as u8),
    }
}

/// One command of a script, with `>&2` applied.
async fn shell_command(words: &[String], env: &Environment, stdio: &mut Stdio) -> u8 {
    let to_stderr = words.last().is_some_and(|w| w == ">&2" || w == "1>&2");
    let words = if to_stderr {
        &words[..words.len() - 1]
    } else {
        words
    };
    let name = words.first().map(String::as_str).unwrap_or_default();
    let code = if to_stderr {
        // The command's stdout goes to stderr; it reads no stdin (none is redirected to it).
        let (output, mut collected) = mpsc::channel(16);
        let run = async move {
            let mut redirected = Stdio {
                stdin: None,
                output,
            };
            builtin(words, env, &mut redirected).await
        };
        let forward = async {
            while let Some(Output::Stdout(bytes) | Output::Stderr(bytes)) = collected.recv().await {
                stdio.stderr(bytes).await;
            }
        };
        tokio::join!(run, forward).0
    } else {
        builtin(words, env, stdio).await
    };
    match code {
        Some(code) => code,
        None => {
            stdio.stderr(format!("sh: {name}: not found\n")).await;
            127
        }
    }
}

/// An interactive `sh`: each line of stdin is a script; `exit` ends it.
async fn interactive_shell(env: &Environment, stdio: &mut Stdio) -> u8 {
    let Some(mut stdin) = stdio.stdin.take() else {
        return 0;
    };
    let mut pending = Vec::new();
    let mut code = 0;
    while let Some(chunk) = stdin.recv().await {
        pending.extend_from_slice(&chunk);
        while let Some(end) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim();
            if line == "exit" || line.starts_with("exit ") {
                return shell(line, env, stdio).await;
            }
            code = shell(line, env, stdio).await;
        }
    }
    code
}

/// Splits a script into commands (words, with single and double quotes and backslashes as in
/// `sh`) and how each is joined to the next.
fn parse_script(script: &str) -> Vec<(Vec<String>, Join)> {
    let mut commands = Vec::new();
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = script.chars().peekable();
    let mut end_command = |words: &mut Vec<String>, word: &mut Option<String>, join| {
        words.extend(word.take());
        commands.push((std::mem::take(words), join));
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    w.push(q);
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => w.extend(chars.next()),
                        other => w.push(other),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).extend(chars.next()),
            ';' | '\n' => end_command(&mut words, &mut word, Join::Always),
            '&' if chars.peek() == Some(&'&') => {
                chars.next();
                end_command(&mut words, &mut word, Join::IfSuccess);
            }
            '|' if chars.peek() == Some(&'|') => {
                chars.next();
                end_command(&mut words, &mut word, Join::IfFailure);
            }
            c if c.is_whitespace() => words.extend(word.take()),
            other => word.get_or_insert_with(String::new).push(other),
        }
    }
    end_command(&mut words, &mut word, Join::Always);
    commands
}

/// One line of a container's log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LogLine {
    /// When it was written.
    pub(crate) at: Timestamp,
    /// The text, with its newline.
    pub(crate) text: String,
}

/// The log of `container` started at `started`, and its exit line once it `exited` (code, when).
pub(crate) fn log(
    pod: &Pod,
    container: &Container,
    started: Timestamp,
    exited: Option<(i32, Timestamp)>,
) -> Vec<LogLine> {
    let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    let command: Vec<&str> = container
        .command
        .iter()
        .flatten()
        .chain(container.args.iter().flatten())
        .map(String::as_str)
        .collect();
    let mut lines = vec![
        format!(
            "nodesim: container {} of pod {namespace}/{name} started",
            container.name
        ),
        format!("nodesim: image {}", crate::lifecycle::image(container)),
        format!("nodesim: command [{}]", command.join(" ")),
    ];
    let mut stamped: Vec<LogLine> = lines
        .drain(..)
        .map(|text| LogLine {
            at: started,
            text: text + "\n",
        })
        .collect();
    if let Some((code, at)) = exited {
        stamped.push(LogLine {
            at,
            text: format!(
                "nodesim: container {} exited with code {code}\n",
                container.name
            ),
        });
    }
    stamped
}

#[cfg(test)]
#[path = "process_tests.rs"]
mod tests;
