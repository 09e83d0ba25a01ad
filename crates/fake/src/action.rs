//! What a fake client was asked to do: every request, decoded from its HTTP form into the verb,
//! resource and object it names. Mirrors the `Action` types of client-go `testing/actions.go`, as
//! one plain struct instead of an interface per verb.
//!
//! The verb is the test server's own [`Verb`], so a fake's actions and the server's handlers speak
//! of the same verbs; actions spell `DeleteCollection` as client-go's do (`delete-collection`).
//!
//! Decoding the wire request (rather than hooking the typed clients) means the fake records exactly
//! what a real server would have received, whichever client layer produced it.

use std::fmt;

use bytes::Bytes;
use http::{Method, Request};
use kubegen_testserver::Verb;

/// The name client-go's `testing` package gives `verb` in its actions and reactors: RBAC's,
/// except `delete-collection` (`DeleteCollectionActionImpl`), which [`Action::matches`] and
/// an action's `Display` use.
pub(crate) fn action_verb(verb: Verb) -> &'static str {
    match verb {
        Verb::DeleteCollection => "delete-collection",
        other => other.as_str(),
    }
}

/// One recorded request.
///
/// `Display` gives a one-line summary (`update whitelists/status team-a/wl`) that makes assertion
/// failures in fixture tests readable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Action {
    /// What was asked.
    pub verb: Verb,
    /// API group (`""` for the core group).
    pub group: String,
    /// API version.
    pub version: String,
    /// Resource (plural), e.g. `deployments`.
    pub resource: String,
    /// Subresource, e.g. `status`.
    pub subresource: Option<String>,
    /// Namespace of the request; `None` for cluster-scoped or all-namespaces requests.
    pub namespace: Option<String>,
    /// Object name; `None` for collection requests.
    pub name: Option<String>,
    /// Decoded query parameters (`labelSelector`, `resourceVersion`, `dryRun`, ...), in request order.
    pub query: Vec<(String, String)>,
    /// The request body as JSON (object for create/update, patch document for patch, options for
    /// delete); `None` when empty or not JSON.
    pub body: Option<serde_json::Value>,
    /// The `Content-Type` of a patch (merge, JSON, strategic or apply), else `None`.
    pub patch_type: Option<String>,
}

impl Action {
    /// Decodes a request sent to the API; `None` if the path is not an API resource path
    /// (discovery, `/version`, ...).
    pub fn from_request(request: &Request<Bytes>) -> Option<Action> {
        let path = ResourcePath::parse(request.uri().path())?;
        let query = request.uri().query().map(parse_query).unwrap_or_default();
        let watching = query
            .iter()
            .any(|(k, v)| k == "watch" && (v == "true" || v == "1"));
        let verb = match (request.method(), path.name.is_some()) {
            (&Method::GET, true) => Verb::Get,
            (&Method::GET, false) if watching => Verb::Watch,
            (&Method::GET, false) => Verb::List,
            (&Method::POST, _) => Verb::Create,
            (&Method::PUT, _) => Verb::Update,
            (&Method::PATCH, _) => Verb::Patch,
            (&Method::DELETE, true) => Verb::Delete,
            (&Method::DELETE, false) => Verb::DeleteCollection,
            _ => return None,
        };
        let patch_type = (verb == Verb::Patch)
            .then(|| request.headers().get(http::header::CONTENT_TYPE))
            .flatten()
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = serde_json::from_slice(request.body()).ok();
        Some(Action {
            verb,
            group: path.group,
            version: path.version,
            resource: path.resource,
            subresource: path.subresource,
            namespace: path.namespace,
            name: path.name,
            query,
            body,
            patch_type,
        })
    }

    /// Whether this action has `verb` (or `"*"`) on `resource` (or `"*"`). A resource may name a
    /// subresource as `deployments/status`, like RBAC rules and client-go reactors do.
    pub fn matches(&self, verb: &str, resource: &str) -> bool {
        let verb_ok = verb == "*" || verb == action_verb(self.verb);
        let resource_ok = resource == "*"
            || match &self.subresource {
                None => resource == self.resource,
                Some(sub) => {
                    resource.split_once('/') == Some((self.resource.as_str(), sub.as_str()))
                }
            };
        verb_ok && resource_ok
    }

    /// `resource` or `resource/subresource`.
    pub fn resource_path(&self) -> String {
        match &self.subresource {
            Some(sub) => format!("{}/{sub}", self.resource),
            None => self.resource.clone(),
        }
    }

    /// The value of query parameter `key`, if sent.
    pub fn query_param(&self, key: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", action_verb(self.verb), self.resource_path())?;
        match (&self.namespace, &self.name) {
            (Some(ns), Some(name)) => write!(f, " {ns}/{name}"),
            (Some(ns), None) => write!(f, " {ns}"),
            (None, Some(name)) => write!(f, " {name}"),
            (None, None) => Ok(()),
        }
    }
}

/// The parts of `/api/v1/...` or `/apis/<group>/<version>/...`.
#[derive(Debug, PartialEq, Eq)]
struct ResourcePath {
    group: String,
    version: String,
    namespace: Option<String>,
    resource: String,
    name: Option<String>,
    subresource: Option<String>,
}

impl ResourcePath {
    fn parse(path: &str) -> Option<ResourcePath> {
        let segments: Vec<String> = path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(percent_decode)
            .collect();
        let (group, version, rest) = match segments.as_slice() {
            [api, version, rest @ ..] if api == "api" => (String::new(), version.clone(), rest),
            [apis, group, version, rest @ ..] if apis == "apis" => {
                (group.clone(), version.clone(), rest)
            }
            _ => return None,
        };
        // `namespaces/<ns>/<resource>...` is namespaced; a bare `namespaces/<name>` is the Namespace object.
        // `namespaces/<name>/status` and `/finalize` are subresources of the Namespace itself.
        let (namespace, rest) = match rest {
            [ns, _, sub] if ns == "namespaces" && (sub == "status" || sub == "finalize") => {
                (None, rest.to_vec())
            }
            [ns, namespace, tail @ ..] if ns == "namespaces" && !tail.is_empty() => {
                (Some(namespace.clone()), tail.to_vec())
            }
            other => (None, other.to_vec()),
        };
        let mut parts = rest.into_iter();
        let resource = parts.next()?;
        let name = parts.next();
        let subresource = parts.next();
        if parts.next().is_some() {
            return None;
        }
        Some(ResourcePath {
            group,
            version,
            namespace,
            resource,
            name,
            subresource,
        })
    }
}

/// Splits and decodes `a=1&b=x%2Cy` (form encoding: `+` is a space).
fn parse_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (
                percent_decode(&key.replace('+', " ")),
                percent_decode(&value.replace('+', " ")),
            )
        })
        .collect()
}

/// Decodes `%XX` escapes; malformed escapes are kept literally.
fn percent_decode(input: &str) -> String {
    let bytes = input.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;

    fn request(method: Method, uri: &str, body: &str) -> Request<Bytes> {
        Request::builder()
            .method(method)
            .uri(uri)
            .header(http::header::CONTENT_TYPE, "application/merge-patch+json")
            .body(Bytes::from(body.to_owned()))
            .unwrap_or_default()
    }

    fn action(method: Method, uri: &str, body: &str) -> Action {
        match Action::from_request(&request(method, uri, body)) {
            Some(action) => action,
            None => panic!("{uri} should decode"),
        }
    }

    #[test]
    fn each_method_and_path_shape_maps_to_its_verb() {
        let base = "/apis/apps/v1/namespaces/ns/deployments";
        let cases = [
            (Method::GET, format!("{base}/d"), Verb::Get),
            (Method::GET, base.to_owned(), Verb::List),
            (
                Method::GET,
                format!("{base}?watch=true&resourceVersion=5"),
                Verb::Watch,
            ),
            (Method::POST, base.to_owned(), Verb::Create),
            (Method::PUT, format!("{base}/d"), Verb::Update),
            (Method::PATCH, format!("{base}/d"), Verb::Patch),
            (Method::DELETE, format!("{base}/d"), Verb::Delete),
            (Method::DELETE, base.to_owned(), Verb::DeleteCollection),
        ];
        for (method, uri, verb) in cases {
            assert_eq!(action(method, &uri, "").verb, verb, "{uri}");
        }
    }

    #[test]
    fn core_group_namespaced_subresource_is_decoded() {
        let a = action(
            Method::PUT,
            "/api/v1/namespaces/team-a/pods/p1/status",
            r#"{"kind":"Pod"}"#,
        );
        assert_eq!(
            (a.group.as_str(), a.version.as_str(), a.resource.as_str()),
            ("", "v1", "pods")
        );
        assert_eq!(a.namespace.as_deref(), Some("team-a"));
        assert_eq!(a.name.as_deref(), Some("p1"));
        assert_eq!(a.subresource.as_deref(), Some("status"));
        assert_eq!(a.body, Some(serde_json::json!({"kind": "Pod"})));
        assert!(a.matches("update", "pods/status"));
        assert!(!a.matches("update", "pods"));
        assert_eq!(a.to_string(), "update pods/status team-a/p1");
    }

    #[test]
    fn namespace_object_itself_is_cluster_scoped() {
        let a = action(Method::GET, "/api/v1/namespaces/team-a", "");
        assert_eq!(
            (a.verb, a.resource.as_str(), a.name.as_deref(), a.namespace),
            (Verb::Get, "namespaces", Some("team-a"), None)
        );
    }

    #[test]
    fn namespace_status_is_a_subresource_not_a_namespace() {
        let a = action(Method::PUT, "/api/v1/namespaces/team-a/status", "");
        assert_eq!(
            (
                a.resource.as_str(),
                a.name.as_deref(),
                a.subresource.as_deref()
            ),
            ("namespaces", Some("team-a"), Some("status"))
        );
        assert_eq!(a.namespace, None);
    }

    #[test]
    fn query_is_percent_decoded_and_patch_type_kept() {
        let a = action(
            Method::PATCH,
            "/apis/apps/v1/namespaces/ns/deployments/d?fieldManager=x%2By&dryRun=All",
            "{}",
        );
        assert_eq!(a.query_param("fieldManager"), Some("x+y"));
        assert_eq!(a.query_param("dryRun"), Some("All"));
        assert_eq!(
            a.patch_type.as_deref(),
            Some("application/merge-patch+json")
        );
        let list = action(
            Method::GET,
            "/api/v1/pods?labelSelector=app%3Dweb%2Ctier+in+%28a%29",
            "",
        );
        assert_eq!(
            list.query_param("labelSelector"),
            Some("app=web,tier in (a)")
        );
        assert_eq!(list.patch_type, None);
    }

    #[test]
    fn non_resource_paths_are_not_actions() {
        for uri in [
            "/version",
            "/apis",
            "/api/v1",
            "/apis/apps/v1/namespaces/ns/deployments/d/status/extra",
        ] {
            assert_eq!(
                Action::from_request(&request(Method::GET, uri, "")),
                None,
                "{uri}"
            );
        }
    }

    proptest::proptest! {
        /// Any resource path the client can build decodes back into its parts.
        #[test]
        fn resource_paths_round_trip(
            group in proptest::option::of("[a-z]{1,8}(\\.[a-z]{1,8}){0,2}"),
            namespace in proptest::option::of("[a-z0-9-]{1,12}"),
            resource in "[a-z]{1,12}".prop_filter("the Namespace kind is covered above", |r| r != "namespaces"),
            name in proptest::option::of("[a-z0-9.-]{1,12}"),
            subresource in proptest::option::of("[a-z]{1,8}"),
        ) {
            let subresource = subresource.filter(|_| name.is_some());
            let mut path = match &group {
                Some(group) => format!("/apis/{group}/v1"),
                None => "/api/v1".to_owned(),
            };
            for segment in [namespace.as_ref().map(|ns| format!("namespaces/{ns}")), Some(resource.clone()), name.clone(), subresource.clone()].into_iter().flatten() {
                path.push('/');
                path.push_str(&segment);
            }
            let parsed = ResourcePath::parse(&path);
            let expected = ResourcePath { group: group.unwrap_or_default(), version: "v1".to_owned(), namespace, resource, name, subresource };
            proptest::prop_assert_eq!(parsed, Some(expected));
        }
    }

    #[test]
    fn wildcards_match_everything() {
        let a = action(
            Method::DELETE,
            "/apis/apps/v1/namespaces/ns/deployments",
            "",
        );
        assert!(a.matches("*", "*"));
        assert!(a.matches("delete-collection", "*"));
        assert!(!a.matches("delete", "deployments"));
    }
}
