//! A data directory so objects survive a restart ([`crate::ServerOptions::data_dir`]): what etcd's
//! disk is to a real server, for the `kubegen-testserver` binary run as a local cluster.
//!
//! The directory holds `objects.json` (every object with its resource and the store's
//! resourceVersion) and `tokens.json` (the tokens the TokenRequest API issued, which a real
//! server's signing key would keep valid). Both are rewritten whole, through a temporary file and
//! a rename, shortly after changes and when the server stops, so a crash leaves the previous
//! snapshot, never half of one.
//!
//! # What a restart looks like
//! Objects keep their uid, resourceVersion and everything else; the store continues at the saved
//! resourceVersion with no history, so a client's watch from before the restart gets 410 Gone
//! and relists, as after an etcd compaction. Custom resources are served again once their
//! restored CRDs are registered, which is the CRDs' strategy's (`crate::kinds::crd`, called by
//! the caller of [`restore`]).

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Error;
use crate::registry::ResourceKey;
use crate::storage::State;
use crate::storage::tokens::{Issued, IssuedTokens};

const OBJECTS: &str = "objects.json";
const TOKENS: &str = "tokens.json";

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

#[derive(Serialize, Deserialize)]
struct SavedToken {
    token: String,
    namespace: String,
    name: String,
    uid: String,
    expires: Timestamp,
}

/// Writes the state and the issued tokens into `dir` (created if missing).
///
/// # Errors
/// [`Error::DataDirFailed`] naming the file that could not be written.
pub(crate) fn save(dir: &Path, state: &State, tokens: &IssuedTokens) -> Result<(), Error> {
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
    let tokens: Vec<SavedToken> = tokens
        .tokens
        .lock()
        .iter()
        .map(|(token, issued)| SavedToken {
            token: token.clone(),
            namespace: issued.namespace.clone(),
            name: issued.name.clone(),
            uid: issued.uid.clone(),
            expires: issued.expires,
        })
        .collect();
    write_json(&dir.join(TOKENS), &tokens)
}

/// Restores what [`save`] wrote into an empty `state` and `tokens`; `false` when `dir` holds no
/// snapshot yet (a first start).
///
/// # Errors
/// [`Error::DataDirFailed`] naming the file that cannot be read or is not a snapshot (never
/// silently starting empty over a user's data).
pub(crate) fn restore(dir: &Path, state: &mut State, tokens: &IssuedTokens) -> Result<bool, Error> {
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
    let token_path = dir.join(TOKENS);
    if token_path.exists() {
        let saved: Vec<SavedToken> = read_json(&token_path)?;
        let mut issued = tokens.tokens.lock();
        for t in saved {
            let token = Issued {
                namespace: t.namespace,
                name: t.name,
                uid: t.uid,
                expires: t.expires,
            };
            issued.insert(t.token, token);
        }
    }
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
        let tokens = IssuedTokens::default();
        tokens.tokens.lock().insert(
            "t".into(),
            Issued {
                namespace: "default".into(),
                name: "bot".into(),
                uid: "u-2".into(),
                expires: Timestamp::UNIX_EPOCH,
            },
        );
        save(dir.path(), &state, &tokens).unwrap();

        let mut restored = State::new(100);
        let restored_tokens = IssuedTokens::default();
        assert!(restore(dir.path(), &mut restored, &restored_tokens).unwrap());
        let back = restored
            .store
            .get(&configmaps, &("default".into(), "a".into()))
            .unwrap();
        assert_eq!(back.value, stored.value);
        assert_eq!(restored.store.current_rv(), state.store.current_rv());
        assert_eq!(restored.store.compacted_rv(), state.store.current_rv());
        assert_eq!(restored_tokens.tokens.lock()["t"].name, "bot");
    }

    #[test]
    fn an_empty_directory_is_a_first_start_and_a_bad_snapshot_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let tokens = IssuedTokens::default();
        assert!(!restore(dir.path(), &mut State::new(10), &tokens).unwrap());
        std::fs::write(dir.path().join(OBJECTS), "{not json").unwrap();
        let err = restore(dir.path(), &mut State::new(10), &tokens).unwrap_err();
        assert!(
            err.to_string().contains("objects.json"),
            "the error names the file: {err}"
        );
    }
}
