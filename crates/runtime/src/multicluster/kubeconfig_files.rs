//! A provider over a fixed list of kubeconfig files: each file is one cluster, engaged at start,
//! re-engaged when the file's content changes (rotated credentials), disengaged when the file
//! disappears or stops parsing. The counterpart of multicluster-runtime's `providers/file`
//! (kubeconfig files and directories, watched with fsnotify).
//!
//! # Differences from multicluster-runtime
//! The files are polled (every [`KubeconfigFiles::poll`], by content, not modification time)
//! instead of watched with inotify: no extra dependency, and it also notices a Secret volume's
//! atomic symlink swap, which inotify watchers must special-case.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::future::BoxFuture;

use crate::error::Error;
use crate::multicluster::provider::{ClusterSink, Provider, fingerprint, kubeconfig_to_config};

/// One cluster per kubeconfig file. See the module docs.
#[derive(Clone, Debug)]
pub struct KubeconfigFiles {
    files: Vec<(String, PathBuf)>,
    poll: Duration,
}

impl KubeconfigFiles {
    /// The clusters `(name, kubeconfig file)`, re-read every 10 s.
    pub fn new(files: impl IntoIterator<Item = (String, PathBuf)>) -> KubeconfigFiles {
        KubeconfigFiles {
            files: files.into_iter().collect(),
            poll: Duration::from_secs(10),
        }
    }

    /// How often the files are read again.
    #[must_use]
    pub fn poll(mut self, every: Duration) -> KubeconfigFiles {
        self.poll = every;
        self
    }

    /// Reads every file once and reports what changed since `seen` (name → fingerprint).
    fn scan(&self, sink: &ClusterSink, seen: &mut BTreeMap<String, u64>) {
        for (name, path) in &self.files {
            match read(name, path) {
                Ok((config, print)) => {
                    if seen.get(name) != Some(&print) {
                        seen.insert(name.clone(), print);
                        sink.engage(name, config, print);
                    }
                }
                Err(error) => {
                    if seen.remove(name).is_some() {
                        tracing::warn!(cluster = name, %error, "kubeconfig file unusable; disengaging");
                        sink.disengage(name);
                    } else {
                        tracing::warn!(cluster = name, %error, "kubeconfig file unusable; not engaged");
                    }
                }
            }
        }
    }
}

/// The configuration and fingerprint of one file.
fn read(name: &str, path: &Path) -> Result<(kubegen_client::Config, u64), Error> {
    let bytes = std::fs::read(path).map_err(|error| Error::ClusterUnusable {
        cluster: name.to_owned(),
        reason: format!("reading {}: {error}", path.display()),
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let config = kubeconfig_to_config(name, &text, path)?;
    Ok((config, fingerprint(&bytes)))
}

impl Provider for KubeconfigFiles {
    fn name(&self) -> &str {
        "kubeconfig-files"
    }

    fn run(
        &self,
        sink: ClusterSink,
        stop: BoxFuture<'static, ()>,
    ) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(async move {
            let mut seen = BTreeMap::new();
            let mut tick = tokio::time::interval(self.poll);
            tokio::pin!(stop);
            loop {
                tokio::select! {
                    _ = tick.tick() => self.scan(&sink, &mut seen),
                    () = &mut stop => return Ok(()),
                }
            }
        })
    }
}
