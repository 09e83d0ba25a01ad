use super::*;

fn info(method: &str, uri: &str) -> Attributes {
    let (path, query) = uri.split_once('?').unwrap_or((uri, ""));
    let method = Method::from_bytes(method.as_bytes()).unwrap();
    attributes(
        &method,
        path,
        &Query::parse(Some(query)),
        &UserInfo::new("u", "", &[]),
    )
}

fn parts(a: &Attributes) -> [&str; 6] {
    [
        &a.verb,
        &a.namespace,
        &a.group,
        &a.resource,
        &a.subresource,
        &a.name,
    ]
}

#[test]
fn methods_map_to_verbs_like_request_info() {
    let cases = [
        ("GET", "/api/v1/namespaces/n/pods/p", "get"),
        ("HEAD", "/api/v1/namespaces/n/pods/p", "get"),
        ("GET", "/api/v1/namespaces/n/pods", "list"),
        ("GET", "/api/v1/namespaces/n/pods?watch=true", "watch"),
        ("GET", "/api/v1/namespaces/n/pods?watch=1", "watch"),
        ("GET", "/api/v1/watch/namespaces/n/pods", "watch"),
        ("GET", "/api/v1/watch/namespaces/n/pods/p", "watch"),
        ("GET", "/api/v1/namespaces/n/pods/p?watch=true", "get"),
        ("POST", "/api/v1/namespaces/n/pods", "create"),
        ("PUT", "/api/v1/namespaces/n/pods/p", "update"),
        ("PATCH", "/api/v1/namespaces/n/pods/p", "patch"),
        ("DELETE", "/api/v1/namespaces/n/pods/p", "delete"),
        ("DELETE", "/api/v1/namespaces/n/pods", "deletecollection"),
    ];
    for (method, uri, verb) in cases {
        assert_eq!(info(method, uri).verb, verb, "{method} {uri}");
    }
}

#[test]
fn resource_paths_split_into_namespace_group_resource_subresource_and_name() {
    let a = info("PUT", "/apis/apps/v1/namespaces/ns/deployments/web/status");
    assert_eq!(
        parts(&a),
        ["update", "ns", "apps", "deployments", "status", "web"]
    );
    assert_eq!(a.version, "v1");
    let a = info("GET", "/api/v1/nodes/n1");
    assert_eq!(parts(&a), ["get", "", "", "nodes", "", "n1"]);
    let a = info("GET", "/apis/police.example.com/v1/whitelists");
    assert_eq!(
        parts(&a),
        ["list", "", "police.example.com", "whitelists", "", ""]
    );
}

#[test]
fn a_namespace_object_is_also_the_request_namespace() {
    let a = info("GET", "/api/v1/namespaces/foo");
    assert_eq!(parts(&a), ["get", "foo", "", "namespaces", "", "foo"]);
    let a = info("PUT", "/api/v1/namespaces/foo/status");
    assert_eq!(
        parts(&a),
        ["update", "foo", "", "namespaces", "status", "foo"]
    );
    let a = info("GET", "/api/v1/namespaces");
    assert_eq!(parts(&a), ["list", "", "", "namespaces", "", ""]);
}

#[test]
fn paths_outside_resources_are_non_resource_requests_with_the_method_as_verb() {
    for (method, path) in [
        ("GET", "/healthz"),
        ("GET", "/api"),
        ("GET", "/api/v1"),
        ("GET", "/apis/apps"),
        ("GET", "/apis/apps/v1"),
        ("GET", "/openapi/v2"),
        ("POST", "/metrics"),
    ] {
        let a = info(method, path);
        assert_eq!(
            (a.verb.as_str(), a.path.as_str(), a.resource.as_str()),
            (method.to_ascii_lowercase().as_str(), path, ""),
            "{method} {path}"
        );
    }
}

#[test]
fn a_list_selecting_one_name_is_authorized_for_that_name() {
    let a = info(
        "GET",
        "/api/v1/namespaces/n/configmaps?fieldSelector=metadata.name%3Dx",
    );
    assert_eq!(parts(&a), ["list", "n", "", "configmaps", "", "x"]);
    let a = info(
        "GET",
        "/api/v1/configmaps?watch=1&fieldSelector=a%3Db,metadata.name%3D%3Dy",
    );
    assert_eq!((a.verb.as_str(), a.name.as_str()), ("watch", "y"));
    let a = info("GET", "/api/v1/configmaps?fieldSelector=metadata.name!%3Dx");
    assert_eq!(a.name, "");
    let a = info(
        "DELETE",
        "/api/v1/namespaces/n/configmaps?fieldSelector=metadata.name%3Dx",
    );
    assert_eq!((a.verb.as_str(), a.name.as_str()), ("deletecollection", ""));
}

fn denied(method: &str, uri: &str) -> String {
    forbidden(&info(method, uri), "").message
}

#[test]
fn denials_are_worded_like_the_real_server() {
    assert_eq!(
        denied("GET", "/api/v1/namespaces/default/configmaps/x"),
        r#"configmaps "x" is forbidden: User "u" cannot get resource "configmaps" in API group "" in the namespace "default""#
    );
    assert_eq!(
        denied("GET", "/api/v1/nodes"),
        r#"nodes is forbidden: User "u" cannot list resource "nodes" in API group "" at the cluster scope"#
    );
    assert_eq!(
        denied("PUT", "/apis/apps/v1/namespaces/d/deployments/web/status"),
        r#"deployments.apps "web" is forbidden: User "u" cannot update resource "deployments/status" in API group "apps" in the namespace "d""#
    );
    assert_eq!(
        denied("POST", "/metrics"),
        r#"forbidden: User "u" cannot post path "/metrics""#
    );
}

#[test]
fn denial_details_name_the_resource_and_object_and_stay_empty_for_paths() {
    let e = forbidden(
        &info("GET", "/apis/apps/v1/namespaces/d/deployments/web/status"),
        "",
    );
    assert_eq!((e.code, &*e.reason), (403, "Forbidden"));
    assert_eq!(
        (
            e.details.name.as_str(),
            e.details.group.as_str(),
            e.details.kind.as_str()
        ),
        ("web", "apps", "deployments")
    );
    let e = forbidden(&info("GET", "/foo"), "");
    assert!(e.empty_details);
    assert_eq!(*e.details, crate::status::Details::default());
}

#[test]
fn an_authorizer_reason_follows_the_message() {
    let e = forbidden(&info("GET", "/version"), "no way");
    assert_eq!(
        e.message,
        r#"forbidden: User "u" cannot get path "/version": no way"#
    );
}
