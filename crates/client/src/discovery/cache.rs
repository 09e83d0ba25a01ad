//! Discovery, cached: in memory for the life of the value, and optionally on disk across
//! processes in kubectl's layout. Mirrors client-go `discovery/cached/memory` (`memCacheClient`)
//! and `discovery/cached/disk` (`CachedDiscoveryClient`), merged into one type because every
//! user wants the memory layer and the disk layer is only a place to start from.
//!
//! # Why cache
//! A RESTMapper or a dynamic informer factory asks "what serves kind X" many times; discovery
//! costs two requests (aggregated) or one per group version (1.15: ~30), and kubectl pays that
//! on every invocation unless it reads `~/.kube/cache/discovery`.
//!
//! # Disk layout (kubectl's, so both share one cache)
//! `<dir>/servergroups.json` (an `APIGroupList`) and `<dir>/<group version>/serverresources.json`
//! (an `APIResourceList`: `v1/serverresources.json`, `apps/v1/serverresources.json`), where
//! `<dir>` is per server, by default `~/.kube/cache/discovery/<host>_<port>`
//! ([`default_cache_dir`], which honours `KUBECACHEDIR` as kubectl does). A file older than the TTL (by modification time; kubectl's default,
//! 6 hours) counts as absent.
//!
//! # Guarantees
//! - A cache that is missing, expired, unreadable or does not parse is ignored and discovery is
//!   asked again (and the files rewritten); nothing panics on a corrupt cache.
//! - Group versions that failed are not written to disk, so they are asked again next time.
//! - After [`CachedDiscovery::invalidate`] the next read goes to the server, whatever the disk
//!   holds; [`CachedDiscovery::fresh`] says whether the data came from the server in this
//!   process (client-go's `Fresh`: a miss on fresh data is a real miss, not worth a refresh).
//!
//! # Differences from client-go
//! A disk cache with one group version missing or stale is ignored whole (client-go asks for that
//! group version alone): with aggregated discovery the whole API is two requests anyway.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::documents::{ApiGroupList, ApiResourceList};
use super::{ServerResources, server_resources};
use crate::client::Client;
use crate::error::Result;

/// kubectl's default time to live of the disk cache.
pub const DEFAULT_TTL: Duration = Duration::from_secs(6 * 60 * 60);

/// Where and for how long discovery is kept on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheOptions {
    /// The per-server cache directory (see [`default_cache_dir`]); `None`: memory only.
    pub dir: Option<PathBuf>,
    /// How old a file may be and still be used.
    pub ttl: Duration,
}

impl Default for CacheOptions {
    /// Memory only; [`DEFAULT_TTL`] once a directory is set.
    fn default() -> Self {
        CacheOptions {
            dir: None,
            ttl: DEFAULT_TTL,
        }
    }
}

impl CacheOptions {
    /// Also keeps discovery in `dir` (the directory of one server).
    pub fn dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = Some(dir.into());
        self
    }

    /// Uses files at most `ttl` old.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }
}

/// kubectl's cache directory for the server at `server_url`:
/// `~/.kube/cache/discovery/<host>_<port>`, or `$KUBECACHEDIR/discovery/<host>_<port>` when that
/// variable is set (`https://127.0.0.1:6443` → `127.0.0.1_6443`; every character but letters,
/// digits, `_`, `/`, `.`, `(` and `)` becomes `_`, as kubectl's `computeDiscoverCacheDir` does).
/// `None` when neither the variable nor a home directory is there.
pub fn default_cache_dir(server_url: &str) -> Option<PathBuf> {
    let schemeless = server_url
        .strip_prefix("https://")
        .or_else(|| server_url.strip_prefix("http://"))
        .unwrap_or(server_url);
    let safe: String = schemeless
        .chars()
        .map(|c| {
            let kept = c.is_alphanumeric() || matches!(c, '_' | '/' | '.' | '(' | ')');
            if kept { c } else { '_' }
        })
        .collect();
    let cache = match std::env::var_os("KUBECACHEDIR").filter(|dir| !dir.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => home::home_dir()?.join(".kube/cache"),
    };
    Some(cache.join("discovery").join(safe))
}

#[derive(Default)]
struct State {
    /// What was last read. Invariant: `None` right after `invalidate`.
    memory: Option<Arc<ServerResources>>,
    /// Whether `memory` came from the server in this process.
    fresh: bool,
    /// Set by `invalidate`: the disk is not read again until rewritten.
    skip_disk: bool,
}

/// Discovery through a memory cache and, optionally, a disk cache (see the module doc).
/// Cheap to share behind an `Arc`; concurrent readers share one request.
pub struct CachedDiscovery {
    client: Client,
    options: CacheOptions,
    state: tokio::sync::Mutex<State>,
}

impl CachedDiscovery {
    /// Discovery of the server behind `client`, kept as `options` say.
    pub fn new(client: Client, options: CacheOptions) -> CachedDiscovery {
        CachedDiscovery {
            client,
            options,
            state: tokio::sync::Mutex::new(State::default()),
        }
    }

    /// The server's API: from memory, else from an unexpired disk cache, else from the server
    /// (then written to disk).
    ///
    /// # Errors
    /// As [`server_resources`], when the server must be asked.
    pub async fn resources(&self) -> Result<Arc<ServerResources>> {
        let mut state = self.state.lock().await;
        if let Some(memory) = &state.memory {
            return Ok(Arc::clone(memory));
        }
        let on_disk = match (&self.options.dir, state.skip_disk) {
            (Some(dir), false) => read_dir(dir, self.options.ttl).await,
            _ => None,
        };
        let (resources, fresh) = match on_disk {
            Some(resources) => (resources, false),
            None => {
                let resources = server_resources(&self.client).await?;
                if let Some(dir) = &self.options.dir
                    && let Err(e) = write_dir(dir, &resources).await
                {
                    tracing::warn!(dir = %dir.display(), error = %e, "could not write the discovery cache");
                }
                (resources, true)
            }
        };
        let resources = Arc::new(resources);
        *state = State {
            memory: Some(Arc::clone(&resources)),
            fresh,
            skip_disk: false,
        };
        Ok(resources)
    }

    /// Forgets what was read: the next [`resources`](Self::resources) asks the server.
    pub async fn invalidate(&self) {
        let mut state = self.state.lock().await;
        *state = State {
            memory: None,
            fresh: false,
            skip_disk: true,
        };
    }

    /// Whether what is held came from the server in this process (nothing held: `false`).
    pub async fn fresh(&self) -> bool {
        self.state.lock().await.fresh
    }
}

/// The file of `group_version`'s resources under `dir`.
fn resources_file(dir: &Path, group_version: &str) -> PathBuf {
    dir.join(group_version).join("serverresources.json")
}

/// Reads `path` if it is younger than `ttl` and parses as `T`.
async fn read_fresh<T: serde::de::DeserializeOwned>(path: &Path, ttl: Duration) -> Option<T> {
    let modified = tokio::fs::metadata(path).await.ok()?.modified().ok()?;
    let age = SystemTime::now()
        .duration_since(modified)
        .unwrap_or_default();
    if age >= ttl {
        return None;
    }
    let bytes = tokio::fs::read(path).await.ok()?;
    match serde_json::from_slice(&bytes) {
        Ok(value) => Some(value),
        Err(e) => {
            tracing::debug!(path = %path.display(), error = %e, "ignoring a corrupt discovery cache file");
            None
        }
    }
}

/// The whole API from the disk cache, or `None` when any file is missing, expired or corrupt.
async fn read_dir(dir: &Path, ttl: Duration) -> Option<ServerResources> {
    let groups: ApiGroupList = read_fresh(&dir.join("servergroups.json"), ttl).await?;
    let mut resources = ServerResources {
        groups: groups.groups,
        ..ServerResources::default()
    };
    let versions: Vec<String> = resources
        .groups
        .iter()
        .flat_map(|g| g.versions.iter().map(|v| v.group_version.clone()))
        .collect();
    for group_version in versions {
        let list: ApiResourceList = read_fresh(&resources_file(dir, &group_version), ttl).await?;
        resources.resources.insert(group_version, list);
    }
    Some(resources)
}

/// Writes `contents` to `path` through a temporary file and a rename, so a reader never sees
/// half a file.
async fn write_atomically(path: &Path, contents: Vec<u8>) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        tokio::fs::create_dir_all(parent).await?;
    }
    let temporary = path.with_extension(format!("tmp{}", std::process::id()));
    tokio::fs::write(&temporary, contents).await?;
    tokio::fs::rename(&temporary, path).await
}

/// Writes what was read and served in full (failed group versions are left out, and dropped
/// from the groups so a later read does not look for them).
async fn write_dir(dir: &Path, resources: &ServerResources) -> std::io::Result<()> {
    let mut groups = ApiGroupList {
        groups: resources.groups.clone(),
    };
    for group in &mut groups.groups {
        group
            .versions
            .retain(|v| resources.resources.contains_key(&v.group_version));
    }
    for (group_version, list) in &resources.resources {
        let json = serde_json::to_vec(list).map_err(std::io::Error::other)?;
        write_atomically(&resources_file(dir, group_version), json).await?;
    }
    let json = serde_json::to_vec(&groups).map_err(std::io::Error::other)?;
    write_atomically(&dir.join("servergroups.json"), json).await
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
