//! `SelfSubjectAccessReview` / `SelfSubjectRulesReview` through raw HTTP, answered by the default
//! allow-all authorizer, in the shapes a real server uses.

use serde_json::json;

use crate::common::*;

const GV: &str = "/apis/authorization.k8s.io/v1";

#[tokio::test]
async fn discovery_serves_the_reviews_as_create_only_cluster_resources() {
    let h = start().await;
    let list = h.http.get(GV).await.body;
    let names: Vec<&str> = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(
        names,
        vec!["selfsubjectaccessreviews", "selfsubjectrulesreviews"]
    );
    for r in list["resources"].as_array().unwrap() {
        assert_eq!(
            (r["namespaced"].clone(), r["verbs"].clone()),
            (json!(false), json!(["create"]))
        );
    }
    let groups = h.http.get("/apis").await.body;
    assert!(
        groups["groups"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["name"] == "authorization.k8s.io")
    );
}

#[tokio::test]
async fn access_review_echoes_the_spec_with_an_allowed_status() {
    let h = start().await;
    let review = json!({"kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
        "spec": {"resourceAttributes": {"namespace": "default", "verb": "create", "group": "apps", "resource": "deployments"}}});
    let reply = h
        .http
        .post(&format!("{GV}/selfsubjectaccessreviews"), review)
        .await;
    assert_eq!(reply.code, 201);
    assert_eq!(
        reply.body,
        json!({"kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
               "spec": {"resourceAttributes": {"namespace": "default", "verb": "create", "group": "apps", "resource": "deployments"}},
               "status": {"allowed": true}})
    );
    let nothing = h
        .http
        .post(
            &format!("{GV}/selfsubjectaccessreviews"),
            json!({"spec": {}}),
        )
        .await;
    assert_status(&nothing, 422, "Invalid");
    assert_eq!(
        nothing.body["details"]["causes"][0]["field"],
        "spec.resourceAttributes"
    );
}

#[tokio::test]
async fn rules_review_lists_everything_and_needs_a_namespace() {
    let h = start().await;
    let reply = h
        .http
        .post(
            &format!("{GV}/selfsubjectrulesreviews"),
            json!({"spec": {"namespace": "default"}}),
        )
        .await;
    assert_eq!(reply.code, 201);
    assert_eq!(reply.body["kind"], "SelfSubjectRulesReview");
    assert_eq!(
        (reply.body["metadata"].clone(), reply.body["spec"].clone()),
        (json!({}), json!({})),
        "the real server answers a new, empty object"
    );
    assert_eq!(
        reply.body["status"],
        json!({"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
               "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
               "incomplete": false})
    );
    let no_namespace = h
        .http
        .post(
            &format!("{GV}/selfsubjectrulesreviews"),
            json!({"spec": {}}),
        )
        .await;
    assert_status(&no_namespace, 400, "BadRequest");
    assert_eq!(no_namespace.body["message"], "no namespace on request");
}

#[tokio::test]
async fn reviews_are_create_only() {
    let h = start().await;
    // Checked on v1.36: the router's generic 405 with empty details.
    let reply = h.http.get(&format!("{GV}/selfsubjectaccessreviews")).await;
    assert_status(&reply, 405, "MethodNotAllowed");
    assert_eq!(
        reply.body["message"],
        "the server does not allow this method on the requested resource"
    );
    assert_eq!(reply.body["details"], json!({}));
}

const WHOAMI: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

/// `kubectl auth whoami`: v1.36 serves `authentication.k8s.io/v1` `selfsubjectreviews` (and
/// `tokenreviews`, create only; no v1beta1 any more) and answers 201 with a new object naming the requesting
/// user, whatever the body says.
#[tokio::test]
async fn self_subject_review_names_the_requesting_user() {
    let h = start().await;
    let list = h.http.get("/apis/authentication.k8s.io/v1").await.body;
    assert_eq!(
        list["resources"],
        json!([{"name": "selfsubjectreviews", "singularName": "selfsubjectreview",
                "namespaced": false, "kind": "SelfSubjectReview", "verbs": ["create"]},
               {"name": "tokenreviews", "singularName": "tokenreview",
                "namespaced": false, "kind": "TokenReview", "verbs": ["create"]}])
    );
    let group = h.http.get("/apis/authentication.k8s.io").await.body;
    assert_eq!(
        group["versions"],
        json!([{"groupVersion": "authentication.k8s.io/v1", "version": "v1"}])
    );
    for body in [
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}),
        json!({"metadata": {"name": "x"}, "status": {"userInfo": {"username": "evil"}}}),
    ] {
        let reply = h.http.post(WHOAMI, body).await;
        assert_eq!(reply.code, 201, "{}", reply.body);
        let mut answer = reply.body.clone();
        let created = answer["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("creationTimestamp");
        assert!(created.is_some_and(|t| t.is_string()), "{}", reply.body);
        assert_eq!(
            answer,
            json!({"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1",
                   "metadata": {},
                   "status": {"userInfo": {"username": "kubegen-admin",
                                           "groups": ["system:masters", "system:authenticated"]}}})
        );
    }
    assert_status(&h.http.get(WHOAMI).await, 405, "MethodNotAllowed");
}
