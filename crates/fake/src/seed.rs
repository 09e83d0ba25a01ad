//! Putting objects into a fake before the test: registering custom kinds and seeding objects.
//! Mirrors `ObjectTracker.Add` / `NewSimpleClientset(objects...)` in client-go `testing/fixture.go`.
//!
//! Seeding goes through the in-process server like any create, so seeded objects get a uid,
//! resourceVersion and generation exactly as if a user had created them; their `status` is written
//! through the status subresource afterwards, since a real create drops it. Seeding is not recorded
//! as actions.

use std::any::TypeId;

use bytes::Bytes;
use futures_util::FutureExt;
use http::{Method, Request, StatusCode};
use http_body_util::BodyExt;
use kube_core::{NamespaceResourceScope, Resource};
use kubegen_testserver::ResourceDefinition;
use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::fake_client::FakeClient;

/// Whether a kind has a `/status` subresource (the `+genclient:noStatus` question).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusSubresource {
    /// `<plural>/status` exists: the main endpoint ignores status, `/status` changes only status.
    Enabled,
    /// No subresource: status is an ordinary field.
    Disabled,
}

/// Where a kind is served, as discovery reports it.
struct Served {
    plural: String,
    namespaced: bool,
    has_status: bool,
}

impl FakeClient {
    /// Serves kind `K` (a custom resource, typically a generated API type), from its
    /// `Resource` group, version, kind, plural and scope.
    pub fn register<K>(&self, status: StatusSubresource)
    where
        K: Resource<DynamicType = ()>,
        K::Scope: 'static,
    {
        let namespaced = TypeId::of::<K::Scope>() == TypeId::of::<NamespaceResourceScope>();
        let definition = ResourceDefinition {
            group: K::group(&()).into_owned(),
            version: K::version(&()).into_owned(),
            kind: K::kind(&()).into_owned(),
            plural: K::plural(&()).into_owned(),
            namespaced,
            status_subresource: status == StatusSubresource::Enabled,
            // What the real server does for every custom resource.
            tracks_generation: true,
            delete_returns_object: true,
            ..ResourceDefinition::default()
        };
        self.api_server().register(definition);
    }

    /// Stores `objects` (each must carry `apiVersion`, `kind` and `metadata.name`; namespaced
    /// objects without a namespace go to `default`; to seed several kinds in one call pass
    /// `serde_json::Value`s). Namespaces the objects live in are created
    /// when missing. Not recorded as actions.
    ///
    /// # Errors
    /// [`Error::SeedInvalid`] for an object that cannot be serialized or lacks its type or name or
    /// whose kind is not served; [`Error::SeedRejected`] when the server refuses it (e.g. it
    /// already exists).
    pub fn seed<T: Serialize>(&self, objects: impl IntoIterator<Item = T>) -> Result<()> {
        for object in objects {
            let value = serde_json::to_value(&object).map_err(|e| Error::SeedInvalid {
                reason: e.to_string(),
            })?;
            self.seed_one(value)?;
        }
        Ok(())
    }

    fn seed_one(&self, mut object: Value) -> Result<()> {
        let field = |object: &Value, pointer: &str| {
            object
                .pointer(pointer)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let (Some(api_version), Some(kind), Some(name)) = (
            field(&object, "/apiVersion"),
            field(&object, "/kind"),
            field(&object, "/metadata/name"),
        ) else {
            return Err(Error::SeedInvalid {
                reason: format!("object needs apiVersion, kind and metadata.name: {object}"),
            });
        };
        let served = self.discover(&api_version, &kind)?;
        let prefix = if api_version.contains('/') {
            format!("/apis/{api_version}")
        } else {
            format!("/api/{api_version}")
        };
        let collection = if served.namespaced {
            let namespace =
                field(&object, "/metadata/namespace").unwrap_or_else(|| "default".to_owned());
            if let Some(meta) = object
                .pointer_mut("/metadata")
                .and_then(Value::as_object_mut)
            {
                meta.insert("namespace".to_owned(), Value::String(namespace.clone()));
            }
            self.ensure_namespace(&namespace)?;
            format!("{prefix}/namespaces/{namespace}/{}", served.plural)
        } else {
            format!("{prefix}/{}", served.plural)
        };
        let status = object.get("status").cloned().filter(|_| served.has_status);
        let created = self.call(
            Method::POST,
            &collection,
            &object,
            &format!("{kind} {name}"),
        )?;
        if let Some(status) = status {
            let mut with_status = created;
            with_status["status"] = status;
            let path = format!("{collection}/{name}/status");
            self.call(
                Method::PUT,
                &path,
                &with_status,
                &format!("{kind} {name} status"),
            )?;
        }
        Ok(())
    }

    /// Creates namespace `name` unless it exists: the server, like a real one, refuses objects in
    /// a missing namespace, and a fixture should not have to list every namespace it uses.
    fn ensure_namespace(&self, name: &str) -> Result<()> {
        let namespace = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
        match self.call(
            Method::POST,
            "/api/v1/namespaces",
            &namespace,
            &format!("Namespace {name}"),
        ) {
            Err(Error::SeedRejected { code: 409, .. }) | Ok(_) => Ok(()),
            Err(error) => Err(error),
        }
    }

    /// Finds plural, scope and status subresource of `kind` through the server's discovery.
    fn discover(&self, api_version: &str, kind: &str) -> Result<Served> {
        let path = if api_version.contains('/') {
            format!("/apis/{api_version}")
        } else {
            format!("/api/{api_version}")
        };
        let not_served = || Error::SeedInvalid {
            reason: format!("kind {kind} of {api_version} is not served; register it first"),
        };
        let list = self
            .call(Method::GET, &path, &Value::Null, api_version)
            .map_err(|_| not_served())?;
        let resources = list
            .get("resources")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let main = resources
            .iter()
            .find(|r| r["kind"] == kind && r["name"].as_str().is_some_and(|n| !n.contains('/')))
            .ok_or_else(not_served)?;
        let plural = main["name"].as_str().unwrap_or_default().to_owned();
        let status_name = format!("{plural}/status");
        Ok(Served {
            has_status: resources.iter().any(|r| r["name"] == status_name.as_str()),
            namespaced: main["namespaced"].as_bool().unwrap_or(false),
            plural,
        })
    }

    /// One request straight to the server (not recorded); the decoded JSON body on success.
    fn call(&self, method: Method, path: &str, body: &Value, what: &str) -> Result<Value> {
        let body = if body.is_null() {
            Bytes::new()
        } else {
            Bytes::from(body.to_string())
        };
        let request = Request::builder()
            .method(method)
            .uri(path)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(body)
            .map_err(|e| Error::SeedInvalid {
                reason: format!("{what}: {e}"),
            })?;
        // Creates, updates and discovery never wait inside the server (only watches, reads at a
        // future resourceVersion and injected latency do), so the answer is ready on first poll.
        let pending = || Error::SeedInvalid {
            reason: format!("{what}: the server did not answer at once (latency injected?)"),
        };
        let response = self
            .api_server()
            .handle(request)
            .now_or_never()
            .ok_or_else(pending)?;
        let code = response.status();
        let bytes = match response
            .into_body()
            .collect()
            .now_or_never()
            .ok_or_else(pending)?
        {
            Ok(collected) => collected.to_bytes(),
            Err(never) => match never {},
        };
        let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if code != StatusCode::OK && code != StatusCode::CREATED {
            let message = value["message"].as_str().unwrap_or_default().to_owned();
            return Err(Error::SeedRejected {
                object: what.to_owned(),
                code: code.as_u16(),
                message,
            });
        }
        Ok(value)
    }
}
