//! URL routing: which endpoint a request path names, following the real server's URL layout
//! (apiserver `endpoints/installer.go`, `request/requestinfo.go`): a [`Target`] (resource,
//! namespace, name, subresource) for resource paths, where the subresources served are the
//! definition's `status`/`scale` plus those the kind's strategy adds (`crate::kinds`, which sits
//! above: the pipeline hands its answer in as [`OwnSubresources`]). Also what belongs to a
//! target: its storage key and the namespace a body must carry.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::registry::{Registry, ResourceDefinition};
use crate::status::{ApiError, Qualified};
use crate::storage::objects::ObjectKey;

/// A resource endpoint: collection, object or subresource.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    pub(crate) def: Arc<ResourceDefinition>,
    /// From the URL (`/namespaces/<ns>/...`); None for cluster-scoped or all-namespaces requests.
    pub(crate) namespace: Option<String>,
    pub(crate) name: Option<String>,
    /// `status` or `scale`.
    pub(crate) subresource: Option<String>,
    /// Legacy `/watch/` path prefix.
    pub(crate) watch_path: bool,
}

impl Target {
    /// The storage key of the object the target names (`name` empty for a collection).
    pub(crate) fn object_key(&self) -> ObjectKey {
        key_of(self, self.name.as_deref().unwrap_or_default())
    }

    /// Group and plural for error messages.
    pub(crate) fn qualified(&self) -> Qualified<'_> {
        Qualified {
            group: &self.def.group,
            resource: &self.def.plural,
        }
    }
}

/// The storage key of `name` under `target`'s namespace.
pub(crate) fn key_of(target: &Target, name: &str) -> ObjectKey {
    (
        target.namespace.clone().unwrap_or_default(),
        name.to_string(),
    )
}

/// Checks the body's namespace against the URL and sets it (or clears it for cluster-scoped kinds).
pub(crate) fn normalize_namespace(
    meta: &mut Map<String, Value>,
    target: &Target,
) -> Result<(), ApiError> {
    let given = meta.get("namespace").and_then(Value::as_str).unwrap_or("");
    match &target.namespace {
        Some(ns) if target.def.namespaced => {
            if !given.is_empty() && given != ns {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            meta.insert("namespace".into(), ns.clone().into());
        }
        _ => {
            meta.remove("namespace");
        }
    }
    Ok(())
}

/// The OpenAPI endpoints.
#[derive(Clone, Debug)]
pub(crate) enum Endpoint {
    /// `/openapi/v2`
    V2,
    /// `/openapi/v3`
    V3Index,
    /// `/openapi/v3/<path>`, e.g. `apis/apps/v1`.
    V3(String),
}

/// Every endpoint the server has.
#[derive(Clone, Debug)]
pub(crate) enum Route {
    Version,
    Health,
    /// `/api`
    CoreVersions,
    /// `/apis`
    GroupList,
    /// `/apis/<group>`
    Group(String),
    /// `/api/v1`, `/apis/<group>/<version>`
    ResourceList(String, String),
    Resource(Target),
    /// `/openapi/v2`, `/openapi/v3`, `/openapi/v3/<path>`
    OpenApi(Endpoint),
    /// `/.well-known/openid-configuration`: the ServiceAccount issuer's OpenID discovery.
    OpenIdConfiguration,
    /// `/openid/v1/jwks`: the keys ServiceAccount tokens are signed with.
    Jwks,
}

/// The request path with its `%XX` escapes decoded, as Go's `URL.Path` is: the real server splits
/// the decoded path, so `configmaps/%41` names `A` and `configmaps/a%2Fb` has one segment more
/// (and is not found). `+` stays a `+`. Decoded via the percent-encoding crate.
///
/// # Errors
/// The plain-text 400 of Go's HTTP server for a `%` not followed by two hex digits.
fn decode_path(path: &str) -> Result<std::borrow::Cow<'_, str>, ApiError> {
    let bytes = path.as_bytes();
    for (at, byte) in bytes.iter().enumerate() {
        let escape = bytes.get(at + 1..at + 3);
        if *byte == b'%' && !escape.is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)) {
            return Err(ApiError::bad_request_path());
        }
    }
    Ok(percent_encoding::percent_decode_str(path).decode_utf8_lossy())
}

/// Whether a kind adds a subresource of this name beside `status` and `scale` (its strategy's
/// `subresources`).
pub(crate) type OwnSubresources<'a> = &'a dyn Fn(&ResourceDefinition, &str) -> bool;

/// Resolves a path against the registry.
///
/// # Errors
/// 404 with the real server's generic body for anything not served.
pub(crate) fn parse(
    path: &str,
    registry: &Registry,
    own: OwnSubresources<'_>,
) -> Result<Route, ApiError> {
    let decoded = decode_path(path)?;
    let path = decoded.as_ref();
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        ["version"] => Ok(Route::Version),
        ["healthz" | "readyz" | "livez"] => Ok(Route::Health),
        [".well-known", "openid-configuration"] => Ok(Route::OpenIdConfiguration),
        ["openid", "v1", "jwks"] => Ok(Route::Jwks),
        ["openapi", "v2"] => Ok(Route::OpenApi(Endpoint::V2)),
        ["openapi", "v3"] => Ok(Route::OpenApi(Endpoint::V3Index)),
        ["openapi", "v3", rest @ ..] => Ok(Route::OpenApi(Endpoint::V3(rest.join("/")))),
        ["api"] => Ok(Route::CoreVersions),
        ["api", "v1"] => Ok(Route::ResourceList(String::new(), "v1".into())),
        ["api", "v1", rest @ ..] => resource(("", "v1"), rest, registry, own),
        ["apis"] => Ok(Route::GroupList),
        // A group nothing serves is outside the API: the real server's plain-text 404.
        ["apis", group, ..] if !registry.all().any(|d| d.group == *group) => {
            Err(ApiError::page_not_found())
        }
        ["apis", group] if registry.all().any(|d| d.group == *group) => {
            Ok(Route::Group(group.to_string()))
        }
        ["apis", group, version]
            if registry
                .all()
                .any(|d| d.group == *group && d.version == *version) =>
        {
            Ok(Route::ResourceList(group.to_string(), version.to_string()))
        }
        ["apis", group, version, rest @ ..] if !group.is_empty() => {
            resource((group, version), rest, registry, own)
        }
        ["api" | "apis", ..] => Err(ApiError::unknown_path()),
        _ => Err(ApiError::page_not_found()),
    }
}

fn resource(
    (group, version): (&str, &str),
    rest: &[&str],
    registry: &Registry,
    own: OwnSubresources<'_>,
) -> Result<Route, ApiError> {
    let (watch_path, rest) = match rest {
        ["watch", tail @ ..] => (true, tail),
        _ => (false, rest),
    };
    let namespace_subresource =
        group.is_empty() && rest.len() == 3 && matches!(rest[2], "status" | "finalize");
    let (namespace, rest) = match rest {
        ["namespaces", ns, tail @ ..] if !tail.is_empty() && !namespace_subresource => {
            (Some(ns.to_string()), tail)
        }
        _ => (None, rest),
    };
    let (plural, name, subresource) = match rest {
        [plural] => (*plural, None, None),
        [plural, name] => (*plural, Some(name.to_string()), None),
        [plural, name, sub] => (*plural, Some(name.to_string()), Some(sub.to_string())),
        _ => return Err(ApiError::unknown_path()),
    };
    let def = registry
        .get(group, version, plural)
        .ok_or_else(ApiError::unknown_path)?;
    if namespace.is_some() && !def.namespaced {
        return Err(ApiError::unknown_path());
    }
    let served = |sub: &str| match sub {
        "status" => def.status_subresource,
        "scale" => def.scale_subresource.is_some(),
        other => own(&def, other),
    };
    if subresource.as_deref().is_some_and(|s| !served(s)) {
        return Err(ApiError::unknown_path());
    }
    Ok(Route::Resource(Target {
        def,
        namespace,
        name,
        subresource,
        watch_path,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kinds' own subresources, as the pipeline answers.
    fn own(def: &ResourceDefinition, sub: &str) -> bool {
        let served = crate::kinds::strategy_for(def).subresources();
        served.iter().any(|(name, _)| *name == sub)
    }

    fn target(path: &str) -> Target {
        match parse(path, &Registry::with_builtins(), &own).unwrap() {
            Route::Resource(t) => t,
            other => panic!("{other:?}"),
        }
    }

    /// Asked v1.36: `configmaps/c%31` is `c1`, `config%6Daps` is `configmaps`, `a%20b` is the name
    /// "a b", `a%2Fb` is one segment more (404 "the server could not find the requested
    /// resource"), `a%zz` is Go's plain-text 400.
    #[test]
    fn paths_are_percent_decoded_before_they_are_split() {
        let t = target("/api/v1/namespaces/n%73/config%6Daps/c%31");
        assert_eq!(
            (
                t.def.plural.as_str(),
                t.namespace.as_deref(),
                t.name.as_deref()
            ),
            ("configmaps", Some("ns"), Some("c1"))
        );
        assert_eq!(
            target("/api/v1/namespaces/ns/configmaps/a%20b+c")
                .name
                .as_deref(),
            Some("a b+c")
        );
        let split = parse(
            "/api/v1/namespaces/ns/configmaps/a%2Fb",
            &Registry::with_builtins(),
            &own,
        );
        assert_eq!(split.unwrap_err().code, 404);
        for bad in [
            "/api/v1/namespaces/ns/configmaps/a%zz",
            "/api/v1/x%4",
            "/api/%",
        ] {
            let error = parse(bad, &Registry::with_builtins(), &own).unwrap_err();
            assert_eq!((error.code, error.plain_text), (400, true), "{bad}");
            assert_eq!(error.message, "400 Bad Request");
        }
    }

    #[test]
    fn namespaced_object_paths_split_into_parts() {
        let t = target("/apis/apps/v1/namespaces/ns/deployments/web/status");
        assert_eq!(t.def.plural, "deployments");
        assert_eq!(
            (
                t.namespace.as_deref(),
                t.name.as_deref(),
                t.subresource.as_deref()
            ),
            (Some("ns"), Some("web"), Some("status"))
        );
    }

    #[test]
    fn namespace_objects_are_not_mistaken_for_namespaced_paths() {
        let t = target("/api/v1/namespaces/ns");
        assert_eq!(
            (
                t.def.plural.as_str(),
                t.name.as_deref(),
                t.namespace.as_deref()
            ),
            ("namespaces", Some("ns"), None)
        );
        let t = target("/api/v1/namespaces/ns/status");
        assert_eq!(
            (t.name.as_deref(), t.subresource.as_deref()),
            (Some("ns"), Some("status"))
        );
        let t = target("/api/v1/namespaces/ns/configmaps");
        assert_eq!(
            (
                t.def.plural.as_str(),
                t.namespace.as_deref(),
                t.name.as_deref()
            ),
            ("configmaps", Some("ns"), None)
        );
    }

    #[test]
    fn unknown_resources_and_subresources_are_404() {
        let registry = Registry::with_builtins();
        for path in [
            "/api/v1/widgets",
            "/apis/apps/v1/namespaces/a/configmaps",
            "/api/v1/namespaces/a/configmaps/x/status",
            "/apis/nope/v1",
            "/x",
        ] {
            assert_eq!(
                parse(path, &registry, &own).unwrap_err().code,
                404,
                "{path}"
            );
        }
    }

    #[test]
    fn paths_under_an_unserved_group_get_the_plain_text_404() {
        let registry = Registry::with_builtins();
        for path in [
            "/apis/nope",
            "/apis/nope/v1",
            "/apis/nope/v1/foos",
            "/apis//v1/x",
        ] {
            let err = parse(path, &registry, &own).unwrap_err();
            assert_eq!((err.code, err.plain_text), (404, true), "{path}");
        }
        for path in ["/apis/apps/v9", "/apis/apps/v1/nopes", "/api/v2"] {
            let err = parse(path, &registry, &own).unwrap_err();
            assert_eq!((err.code, err.plain_text), (404, false), "{path}");
        }
    }

    #[test]
    fn legacy_watch_prefix_is_recognised() {
        let t = target("/api/v1/watch/namespaces/ns/configmaps");
        assert!(t.watch_path);
        assert_eq!(t.namespace.as_deref(), Some("ns"));
    }
}
