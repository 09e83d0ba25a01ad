//! Sans-IO request building: (resource path, verb, options) -> `http::Request<Bytes>`.
//!
//! Mirrors the URL half of client-go `rest/request.go` (`Namespace().Resource().Name().
//! SubResource().VersionedParams()`), as plain functions that never touch the network, so every
//! verb's URL is unit-tested without a server. The URI is relative (path and query); the
//! transport joins it to the cluster URL.

use bytes::Bytes;
use http::Method;

use crate::error::{Error, Result};
use crate::options::{
    CreateOptions, DeleteOptions, GetOptions, ListOptions, Patch, PatchOptions, UpdateOptions,
};

/// Percent-encodes a query component: RFC 3986 unreserved bytes stay, everything else is `%XX`.
fn encode(value: &str, out: &mut String) {
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
}

/// A query string under construction; pairs keep insertion order (stable URLs for tests).
#[derive(Default)]
struct Query(String);

impl Query {
    fn push(&mut self, key: &str, value: &str) {
        self.0.push(if self.0.is_empty() { '?' } else { '&' });
        self.0.push_str(key);
        self.0.push('=');
        encode(value, &mut self.0);
    }

    fn push_opt(&mut self, key: &str, value: Option<&str>) {
        if let Some(value) = value {
            self.push(key, value);
        }
    }

    /// The query every write shares: `dryRun=All` when asked, and `fieldManager`.
    fn for_write(dry_run: bool, field_manager: Option<&str>) -> Query {
        let mut query = Query::default();
        query.dry_run(dry_run);
        query.push_opt("fieldManager", field_manager);
        query
    }

    fn dry_run(&mut self, dry_run: bool) {
        if dry_run {
            self.push("dryRun", "All");
        }
    }

    fn selectors(&mut self, opts: &ListOptions) {
        self.push_opt("labelSelector", opts.label_selector.as_deref());
        self.push_opt("fieldSelector", opts.field_selector.as_deref());
        self.push_opt("shardSelector", opts.shard_selector.as_deref());
    }
}

/// The collection URL of one resource in one scope, e.g. `/apis/apps/v1/namespaces/ns/deployments`.
///
/// # Invariants
/// `collection` starts with `/api/` or `/apis/` and has no trailing slash or query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ResourcePath {
    collection: String,
}

impl ResourcePath {
    /// Builds the path from the resource's group, version, plural and optional namespace.
    pub(crate) fn new(group: &str, version: &str, plural: &str, namespace: Option<&str>) -> Self {
        let mut collection = if group.is_empty() {
            format!("/api/{version}/")
        } else {
            format!("/apis/{group}/{version}/")
        };
        if let Some(ns) = namespace {
            collection.push_str("namespaces/");
            collection.push_str(ns);
            collection.push('/');
        }
        collection.push_str(plural);
        ResourcePath { collection }
    }

    /// The collection path.
    pub(crate) fn collection(&self) -> &str {
        &self.collection
    }

    /// Path of one object (and optionally one of its subresources).
    fn item(&self, name: &str, subresource: Option<&str>) -> Result<String> {
        check_segment("name", name)?;
        let mut path = format!("{}/{name}", self.collection);
        if let Some(sub) = subresource {
            check_segment("subresource", sub)?;
            path.push('/');
            path.push_str(sub);
        }
        Ok(path)
    }

    /// `GET {item}[/{subresource}]`.
    pub(crate) fn get(
        &self,
        name: &str,
        subresource: Option<&str>,
        opts: &GetOptions,
    ) -> Result<http::Request<Bytes>> {
        let mut query = Query::default();
        query.push_opt("resourceVersion", opts.resource_version.as_deref());
        build(Method::GET, self.item(name, subresource)?, query, None)
    }

    /// `GET {collection}` with paging and selectors.
    pub(crate) fn list(&self, opts: &ListOptions) -> Result<http::Request<Bytes>> {
        let mut query = Query::default();
        query.selectors(opts);
        if let Some(limit) = opts.limit.filter(|l| *l > 0) {
            query.push("limit", &limit.to_string());
        }
        query.push_opt("continue", opts.continue_token.as_deref());
        query.push_opt("resourceVersion", opts.resource_version.as_deref());
        query.push_opt(
            "resourceVersionMatch",
            opts.resource_version_match.map(|m| m.as_str()),
        );
        if let Some(seconds) = opts.timeout_seconds {
            query.push("timeoutSeconds", &seconds.to_string());
        }
        build(Method::GET, self.collection.clone(), query, None)
    }

    /// `GET {collection}?watch=true` from a resourceVersion, with bookmarks and any timeout.
    pub(crate) fn watch(&self, opts: &ListOptions) -> Result<http::Request<Bytes>> {
        let mut query = Query::default();
        query.push("watch", "true");
        query.selectors(opts);
        query.push_opt("resourceVersion", opts.resource_version.as_deref());
        if let Some(seconds) = opts.timeout_seconds {
            query.push("timeoutSeconds", &seconds.to_string());
        }
        if opts.allow_watch_bookmarks {
            query.push("allowWatchBookmarks", "true");
        }
        if let Some(send) = opts.send_initial_events {
            query.push("sendInitialEvents", if send { "true" } else { "false" });
            // The server requires an explicit match rule with sendInitialEvents.
            let m = opts
                .resource_version_match
                .map_or("NotOlderThan", |m| m.as_str());
            query.push("resourceVersionMatch", m);
        }
        build(Method::GET, self.collection.clone(), query, None)
    }

    /// `POST {collection}` (or `POST {item}/{subresource}` when `target` is given).
    pub(crate) fn create(
        &self,
        target: Option<(&str, &str)>,
        body: Vec<u8>,
        opts: &CreateOptions,
    ) -> Result<http::Request<Bytes>> {
        let query = Query::for_write(opts.dry_run, opts.field_manager.as_deref());
        let path = match target {
            Some((name, sub)) => self.item(name, Some(sub))?,
            None => self.collection.clone(),
        };
        build(Method::POST, path, query, Some(("application/json", body)))
    }

    /// `PUT {item}[/{subresource}]`.
    pub(crate) fn update(
        &self,
        name: &str,
        subresource: Option<&str>,
        body: Vec<u8>,
        opts: &UpdateOptions,
    ) -> Result<http::Request<Bytes>> {
        let query = Query::for_write(opts.dry_run, opts.field_manager.as_deref());
        let path = self.item(name, subresource)?;
        build(Method::PUT, path, query, Some(("application/json", body)))
    }

    /// `PATCH {item}[/{subresource}]` with the patch type's content type.
    pub(crate) fn patch(
        &self,
        name: &str,
        subresource: Option<&str>,
        patch: &Patch,
        opts: &PatchOptions,
    ) -> Result<http::Request<Bytes>> {
        let mut query = Query::for_write(opts.dry_run, opts.field_manager.as_deref());
        if opts.force {
            if !patch.is_apply() {
                return Err(Error::BuildRequest(
                    "PatchOptions.force is only valid for Patch::Apply".into(),
                ));
            }
            query.push("force", "true");
        }
        let body = serde_json::to_vec(patch.value()).map_err(|source| Error::Encode {
            what: format!("patch of {name}"),
            source,
        })?;
        let path = self.item(name, subresource)?;
        build(
            Method::PATCH,
            path,
            query,
            Some((patch.content_type(), body)),
        )
    }

    /// `GET {item}/{subresource}?{params}`: the pod subresources that stream rather than return
    /// an object (`log`, `exec`, `attach`, `portforward`). `params` keep their order; a key may
    /// repeat (`command=sh&command=-c`).
    pub(crate) fn stream(
        &self,
        name: &str,
        subresource: &str,
        params: &[(&str, String)],
    ) -> Result<http::Request<Bytes>> {
        let mut query = Query::default();
        for (key, value) in params {
            query.push(key, value);
        }
        build(
            Method::GET,
            self.item(name, Some(subresource))?,
            query,
            None,
        )
    }

    /// `DELETE {item}` with a `DeleteOptions` body.
    pub(crate) fn delete(&self, name: &str, opts: &DeleteOptions) -> Result<http::Request<Bytes>> {
        let path = self.item(name, None)?;
        build(
            Method::DELETE,
            path,
            Query::default(),
            Some(delete_body(opts)),
        )
    }

    /// `DELETE {collection}` with selectors in the query and a `DeleteOptions` body.
    pub(crate) fn delete_collection(
        &self,
        delete: &DeleteOptions,
        list: &ListOptions,
    ) -> Result<http::Request<Bytes>> {
        let mut query = Query::default();
        query.selectors(list);
        query.push_opt("resourceVersion", list.resource_version.as_deref());
        let path = self.collection.clone();
        build(Method::DELETE, path, query, Some(delete_body(delete)))
    }
}

fn delete_body(opts: &DeleteOptions) -> (&'static str, Vec<u8>) {
    ("application/json", opts.body().to_string().into_bytes())
}

/// Rejects path segments that would change the URL's structure.
fn check_segment(what: &str, value: &str) -> Result<()> {
    let bad =
        value.is_empty() || value == "." || value == ".." || value.contains(['/', '?', '#', '%']);
    if bad {
        return Err(Error::BuildRequest(format!(
            "invalid {what} {value:?}: must be a non-empty path segment without / ? # %"
        )));
    }
    Ok(())
}

fn build(
    method: Method,
    path: String,
    query: Query,
    body: Option<(&str, Vec<u8>)>,
) -> Result<http::Request<Bytes>> {
    let uri = format!("{path}{}", query.0);
    let mut builder = http::Request::builder()
        .method(method)
        .uri(&uri)
        .header(http::header::ACCEPT, "application/json");
    let body = match body {
        Some((content_type, bytes)) => {
            builder = builder.header(http::header::CONTENT_TYPE, content_type);
            Bytes::from(bytes)
        }
        None => Bytes::new(),
    };
    builder
        .body(body)
        .map_err(|e| Error::BuildRequest(format!("{uri}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{PropagationPolicy, ResourceVersionMatch};

    fn ns_path() -> ResourcePath {
        ResourcePath::new("apps", "v1", "deployments", Some("ns1"))
    }
    fn cluster_path() -> ResourcePath {
        ResourcePath::new("", "v1", "nodes", None)
    }
    fn line(req: &http::Request<Bytes>) -> String {
        format!("{} {}", req.method(), req.uri())
    }

    #[test]
    fn get_urls_in_both_scopes() -> Result<()> {
        let req = ns_path().get("web", None, &GetOptions::default())?;
        assert_eq!(
            line(&req),
            "GET /apis/apps/v1/namespaces/ns1/deployments/web"
        );
        let req = cluster_path().get("n1", None, &GetOptions::default().resource_version("0"))?;
        assert_eq!(line(&req), "GET /api/v1/nodes/n1?resourceVersion=0");
        let req = ns_path().get("web", Some("scale"), &GetOptions::default())?;
        assert_eq!(
            line(&req),
            "GET /apis/apps/v1/namespaces/ns1/deployments/web/scale"
        );
        Ok(())
    }

    #[test]
    fn stream_urls_keep_repeated_keys_in_order() -> Result<()> {
        let pods = ResourcePath::new("", "v1", "pods", Some("ns1"));
        let params = [
            ("command", "sh".to_owned()),
            ("command", "-c".to_owned()),
            ("command", "echo a b".to_owned()),
            ("stdout", "true".to_owned()),
        ];
        assert_eq!(
            line(&pods.stream("web", "exec", &params)?),
            "GET /api/v1/namespaces/ns1/pods/web/exec?command=sh&command=-c&command=echo%20a%20b&stdout=true"
        );
        assert_eq!(
            line(&pods.stream("web", "log", &[])?),
            "GET /api/v1/namespaces/ns1/pods/web/log"
        );
        assert!(pods.stream("a/b", "log", &[]).is_err());
        Ok(())
    }

    #[test]
    fn list_url_encodes_every_option() -> Result<()> {
        let opts = ListOptions::default()
            .labels("app in (a,b),tier!=db")
            .fields("metadata.name=x")
            .limit(500)
            .continue_token("abc=")
            .resource_version("10")
            .resource_version_match(ResourceVersionMatch::NotOlderThan)
            .timeout_seconds(30);
        assert_eq!(
            line(&ns_path().list(&opts)?),
            "GET /apis/apps/v1/namespaces/ns1/deployments?labelSelector=app%20in%20%28a%2Cb%29%2Ctier%21%3Ddb\
             &fieldSelector=metadata.name%3Dx&limit=500&continue=abc%3D&resourceVersion=10\
             &resourceVersionMatch=NotOlderThan&timeoutSeconds=30"
        );
        assert_eq!(
            line(&cluster_path().list(&ListOptions::default())?),
            "GET /api/v1/nodes"
        );
        Ok(())
    }

    #[test]
    fn watch_url_allows_timeouts_above_295_seconds() -> Result<()> {
        let opts = ListOptions::default()
            .resource_version("42")
            .timeout_seconds(587)
            .allow_watch_bookmarks(true);
        assert_eq!(
            line(&ns_path().watch(&opts)?),
            "GET /apis/apps/v1/namespaces/ns1/deployments?watch=true&resourceVersion=42\
             &timeoutSeconds=587&allowWatchBookmarks=true"
        );
        let all = ResourcePath::new("apps", "v1", "deployments", None);
        assert_eq!(
            line(&all.watch(&ListOptions::default())?),
            "GET /apis/apps/v1/deployments?watch=true"
        );
        Ok(())
    }

    #[test]
    fn streaming_watch_sends_resource_version_match() -> Result<()> {
        let opts = ListOptions::default()
            .send_initial_events(true)
            .allow_watch_bookmarks(true);
        assert_eq!(
            line(&cluster_path().watch(&opts)?),
            "GET /api/v1/nodes?watch=true&allowWatchBookmarks=true&sendInitialEvents=true\
             &resourceVersionMatch=NotOlderThan"
        );
        Ok(())
    }

    #[test]
    fn create_update_status_and_subresource_urls() -> Result<()> {
        let opts = CreateOptions::default().field_manager("ctl").dry_run(true);
        let req = ns_path().create(None, b"{}".to_vec(), &opts)?;
        assert_eq!(
            line(&req),
            "POST /apis/apps/v1/namespaces/ns1/deployments?dryRun=All&fieldManager=ctl"
        );
        assert_eq!(req.headers()["content-type"], "application/json");
        assert_eq!(req.body().as_ref(), b"{}");
        let req = ns_path().create(
            Some(("web", "eviction")),
            b"{}".to_vec(),
            &CreateOptions::default(),
        )?;
        assert_eq!(
            line(&req),
            "POST /apis/apps/v1/namespaces/ns1/deployments/web/eviction"
        );
        let req = cluster_path().update("n1", None, b"{}".to_vec(), &UpdateOptions::default())?;
        assert_eq!(line(&req), "PUT /api/v1/nodes/n1");
        let req = ns_path().update(
            "web",
            Some("status"),
            b"{}".to_vec(),
            &UpdateOptions::default(),
        )?;
        assert_eq!(
            line(&req),
            "PUT /apis/apps/v1/namespaces/ns1/deployments/web/status"
        );
        Ok(())
    }

    #[test]
    fn patch_sets_content_type_per_patch_kind() -> Result<()> {
        let value = serde_json::json!({"spec": {}});
        let cases = [
            (Patch::Merge(value.clone()), "application/merge-patch+json"),
            (
                Patch::Json(serde_json::json!([])),
                "application/json-patch+json",
            ),
            (
                Patch::Strategic(value.clone()),
                "application/strategic-merge-patch+json",
            ),
            (Patch::Apply(value.clone()), "application/apply-patch+yaml"),
        ];
        for (patch, content_type) in cases {
            let req = cluster_path().patch("n1", None, &patch, &PatchOptions::default())?;
            assert_eq!(line(&req), "PATCH /api/v1/nodes/n1");
            assert_eq!(req.headers()["content-type"], content_type);
        }
        let apply = PatchOptions::default().field_manager("ctl").force(true);
        let req = ns_path().patch("web", Some("status"), &Patch::Apply(value.clone()), &apply)?;
        assert_eq!(
            line(&req),
            "PATCH /apis/apps/v1/namespaces/ns1/deployments/web/status?fieldManager=ctl&force=true"
        );
        Ok(())
    }

    #[test]
    fn force_is_rejected_for_non_apply_patches() {
        let opts = PatchOptions::default().force(true);
        let err = cluster_path().patch("n1", None, &Patch::Merge(serde_json::json!({})), &opts);
        assert!(matches!(err, Err(Error::BuildRequest(_))));
    }

    #[test]
    fn delete_and_delete_collection_urls_and_bodies() -> Result<()> {
        let opts = DeleteOptions::default().propagation_policy(PropagationPolicy::Background);
        let req = ns_path().delete("web", &opts)?;
        assert_eq!(
            line(&req),
            "DELETE /apis/apps/v1/namespaces/ns1/deployments/web"
        );
        let body: serde_json::Value =
            serde_json::from_slice(req.body()).map_err(|source| Error::Encode {
                what: "test".into(),
                source,
            })?;
        assert_eq!(body["propagationPolicy"], "Background");
        let req = cluster_path().delete_collection(&opts, &ListOptions::default().labels("a=b"))?;
        assert_eq!(line(&req), "DELETE /api/v1/nodes?labelSelector=a%3Db");
        Ok(())
    }

    #[test]
    fn names_that_would_escape_the_path_are_rejected() {
        for bad in ["", "..", "a/b", "a?b", "a%2F"] {
            assert!(
                matches!(
                    cluster_path().get(bad, None, &GetOptions::default()),
                    Err(Error::BuildRequest(_))
                ),
                "{bad:?} accepted"
            );
        }
    }
}
