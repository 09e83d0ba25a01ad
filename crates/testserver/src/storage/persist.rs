//! A data directory so objects survive a restart ([`crate::ServerOptions::data_dir`]): what etcd's
//! disk is to a real server, for the `kubegen-testserver` binary run as a local cluster.
//!
//! The directory holds `objects.json` (every object with its resource and the store's
//! resourceVersion) and `service-account.key` (the PKCS#8 PEM of the key ServiceAccount tokens are
//! signed with, so the tokens of an earlier run stay valid, as with a real server's
//! `--service-account-signing-key-file`). The snapshot is rewritten whole, through a temporary
//! file and a rename, shortly after changes and when the server stops, so a crash leaves the
//! previous snapshot, never half of one; the key is written once, at the first start. A
//! `tokens.json` of an earlier version (opaque tokens) is ignored: those tokens no longer work.
//!
//! # What a restart looks like
//! Objects keep their uid, resourceVersion and everything else; the store continues at the saved
//! resourceVersion with no history, so a client's watch from before the restart gets 410 Gone
//! and relists, as after an etcd compaction. Custom resources are served again once their
//! restored CRDs are registered, which is the CRDs' strategy's (`crate::kinds::crd`, called by
//! the caller of [`restore`]).

use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Error;
use crate::jwt::SigningKey;
use crate::registry::ResourceKey;
use crate::storage::State;
use crate::storage::tokens::TokenKeys;

const OBJECTS: &str = "objects.json";
const KEY: &str = "service-account.key";
const PEM_LABEL: &str = "PRIVATE KEY";

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Snapshot {
    resource_version: u64,
    objects: Vec<SavedObject>,
}

#[derive(Serialize, Deserialize)]
struct SavedObject {
    /// `group/version/plural`.
    resource: String,
    object: Value,
}

/// Writes the state into `dir` (created if missing), and the signing key if it is not there yet.
///
/// # Errors
/// [`Error::DataDirFailed`] naming the file that could not be written.
pub(crate) fn save(dir: &Path, state: &State, tokens: &TokenKeys) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| failed(dir, e))?;
    let snapshot = Snapshot {
        resource_version: state.store.current_rv(),
        objects: state
            .store
            .objects()
            .map(|(resource, stored)| SavedObject {
                resource: resource.as_str().to_string(),
                object: (*stored.value).clone(),
            })
            .collect(),
    };
    write_json(&dir.join(OBJECTS), &snapshot)?;
    save_key(dir, tokens)
}

/// Writes the signing key once (owner-only where permissions exist); a key already there is
/// the one in use (see [`restore`]).
fn save_key(dir: &Path, tokens: &TokenKeys) -> Result<(), Error> {
    let path = dir.join(KEY);
    if path.exists() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|e| failed(dir, e))?;
    let body = STANDARD.encode(tokens.key().pkcs8());
    let mut pem = format!("-----BEGIN {PEM_LABEL}-----\n");
    for line in body.as_bytes().chunks(64) {
        pem.push_str(&String::from_utf8_lossy(line));
        pem.push('\n');
    }
    pem.push_str(&format!("-----END {PEM_LABEL}-----\n"));
    let partial = PathBuf::from(format!("{}.partial", path.display()));
    std::fs::write(&partial, pem).map_err(|e| failed(&partial, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let owner_only = std::fs::Permissions::from_mode(0o600);
        std::fs::set_permissions(&partial, owner_only).map_err(|e| failed(&partial, e))?;
    }
    std::fs::rename(&partial, &path).map_err(|e| failed(&path, e))
}

/// The key `dir` holds, if any.
fn read_key(dir: &Path) -> Result<Option<SigningKey>, Error> {
    let path = dir.join(KEY);
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path).map_err(|e| failed(&path, e))?;
    let body: String = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("-----"))
        .collect();
    let der = STANDARD
        .decode(body)
        .map_err(|e| invalid(&path, format!("not a PEM {PEM_LABEL}: {e}")))?;
    SigningKey::from_pkcs8(&der)
        .map(Some)
        .map_err(|reason| invalid(&path, reason))
}

/// Restores what [`save`] wrote into an empty `state`, and the signing key into `tokens` (a
/// first start writes the new key at once, so tokens issued before any save survive a crash);
/// `false` when `dir` holds no snapshot yet (a first start).
///
/// # Errors
/// [`Error::DataDirFailed`] naming the file that cannot be read or is not a snapshot (never
/// silently starting empty over a user's data).
pub(crate) fn restore(dir: &Path, state: &mut State, tokens: &TokenKeys) -> Result<bool, Error> {
    match read_key(dir)? {
        Some(key) => tokens.replace(key),
        None => save_key(dir, tokens)?,
    }
    let path = dir.join(OBJECTS);
    if !path.exists() {
        return Ok(false);
    }
    let snapshot: Snapshot = read_json(&path)?;
    let mut objects = Vec::with_capacity(snapshot.objects.len());
    for saved in snapshot.objects {
        let resource = ResourceKey::parse(&saved.resource).ok_or_else(|| {
            invalid(
                &path,
                format!("{:?} is not group/version/plural", saved.resource),
            )
        })?;
        objects.push((resource, saved.object));
    }
    for (resource, object) in objects {
        let text = |field: &str| {
            object
                .pointer(&format!("/metadata/{field}"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let key = (text("namespace"), text("name"));
        let rv = text("resourceVersion").parse().unwrap_or(0);
        state.store.restore(resource, key, object, rv);
    }
    state.store.restored_at(snapshot.resource_version);
    Ok(true)
}

fn write_json(path: &Path, value: &impl Serialize) -> Result<(), Error> {
    let bytes = serde_json::to_vec(value).map_err(|e| invalid(path, e.to_string()))?;
    let partial = PathBuf::from(format!("{}.partial", path.display()));
    std::fs::write(&partial, bytes).map_err(|e| failed(&partial, e))?;
    std::fs::rename(&partial, path).map_err(|e| failed(path, e))
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, Error> {
    let bytes = std::fs::read(path).map_err(|e| failed(path, e))?;
    serde_json::from_slice(&bytes).map_err(|e| invalid(path, e.to_string()))
}

fn failed(path: &Path, e: std::io::Error) -> Error {
    invalid(path, e.to_string())
}

fn invalid(path: &Path, reason: String) -> Error {
    Error::DataDirFailed {
        path: path.to_path_buf(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_saved_state_comes_back_with_uids_resource_versions_and_crds() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = State::new(100);
        let configmaps = ResourceKey::new("", "v1", "configmaps");
        let stored = state.store.insert(
            &configmaps,
            ("default".into(), "a".into()),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "a", "namespace": "default", "uid": "u-1"}}),
        );
        let tokens = TokenKeys::generate();
        save(dir.path(), &state, &tokens).unwrap();

        let mut restored = State::new(100);
        let restored_tokens = TokenKeys::generate();
        assert_ne!(restored_tokens.key().kid(), tokens.key().kid());
        assert!(restore(dir.path(), &mut restored, &restored_tokens).unwrap());
        let back = restored
            .store
            .get(&configmaps, &("default".into(), "a".into()))
            .unwrap();
        assert_eq!(back.value, stored.value);
        assert_eq!(restored.store.current_rv(), state.store.current_rv());
        assert_eq!(restored.store.compacted_rv(), state.store.current_rv());
        assert_eq!(restored_tokens.key().kid(), tokens.key().kid());
    }

    #[test]
    fn a_first_start_writes_its_key_at_once_and_a_bad_key_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let tokens = TokenKeys::generate();
        assert!(!restore(dir.path(), &mut State::new(10), &tokens).unwrap());
        let pem = std::fs::read_to_string(dir.path().join(KEY)).unwrap();
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----\n"), "{pem}");
        let again = TokenKeys::generate();
        restore(dir.path(), &mut State::new(10), &again).unwrap();
        assert_eq!(again.key().kid(), tokens.key().kid());

        std::fs::write(dir.path().join(KEY), "-----BEGIN PRIVATE KEY-----\nAAAA\n").unwrap();
        let err = restore(dir.path(), &mut State::new(10), &again).unwrap_err();
        assert!(
            err.to_string().contains(KEY),
            "the error names the file: {err}"
        );
    }

    #[test]
    fn an_empty_directory_is_a_first_start_and_a_bad_snapshot_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let tokens = TokenKeys::generate();
        assert!(!restore(dir.path(), &mut State::new(10), &tokens).unwrap());
        std::fs::write(dir.path().join(OBJECTS), "{not json").unwrap();
        let err = restore(dir.path(), &mut State::new(10), &tokens).unwrap_err();
        assert!(
            err.to_string().contains("objects.json"),
            "the error names the file: {err}"
        );
    }
}
