//! [`AuditLog`]: where events go once written — a file (`--audit-log-path`), stdout (`-`), and
//! a bounded in-memory list tests read ([`crate::ApiServer::audit_events`]). Mirrors the log
//! backend of apiserver `plugin/pkg/audit/log/backend.go` (one JSON event per line, appended),
//! without its rotation (`--audit-log-maxsize` and friends) or batching.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

use parking_lot::Mutex;
use serde_json::Value;

use crate::audit::event::Event;
use crate::audit::policy::AuditPolicy;
use crate::error::Error;

/// How many events the in-memory list keeps (the oldest are dropped first), so that a long-
/// running server with a policy does not grow without bound.
pub(crate) const MEMORY_EVENTS: usize = 100_000;

/// Where the lines go besides memory.
enum Output {
    None,
    Stdout,
    File(File),
}

/// The audit policy and the log it writes to; one per server.
pub(crate) struct AuditLog {
    pub(crate) policy: AuditPolicy,
    output: Mutex<Output>,
    /// The newest events, oldest first. Invariant: at most [`MEMORY_EVENTS`].
    memory: Mutex<VecDeque<Value>>,
}

impl AuditLog {
    /// A log for `policy` written to `path` (`-`: stdout; `None`: memory only), appended to as
    /// kube-apiserver appends.
    ///
    /// # Errors
    /// [`Error::AuditLogFailed`] when the file cannot be opened.
    pub(crate) fn open(policy: AuditPolicy, path: Option<&Path>) -> Result<AuditLog, Error> {
        let output = match path {
            None => Output::None,
            Some(p) if p.as_os_str() == "-" => Output::Stdout,
            Some(p) => {
                let file = OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)
                    .map_err(|source| Error::AuditLogFailed {
                        path: p.to_path_buf(),
                        source,
                    })?;
                Output::File(file)
            }
        };
        Ok(AuditLog {
            policy,
            output: Mutex::new(output),
            memory: Mutex::new(VecDeque::new()),
        })
    }

    /// Writes one event: a line to the output, a value to memory.
    pub(crate) fn write(&self, event: &Event) {
        let line = event.to_line();
        {
            let mut output = self.output.lock();
            let written = match &mut *output {
                Output::None => Ok(()),
                Output::Stdout => writeln!(std::io::stdout().lock(), "{line}"),
                Output::File(file) => writeln!(file, "{line}"),
            };
            if let Err(error) = written {
                tracing::warn!(%error, "writing an audit event failed");
            }
        }
        if let Ok(value) = serde_json::from_str(&line) {
            let mut memory = self.memory.lock();
            if memory.len() == MEMORY_EVENTS {
                memory.pop_front();
            }
            memory.push_back(value);
        }
    }

    /// The events written so far (at most the newest [`MEMORY_EVENTS`]), oldest first.
    pub(crate) fn events(&self) -> Vec<Value> {
        self.memory.lock().iter().cloned().collect()
    }
}
