use bytes::Bytes;
use http::Request;
use serde_json::json;

use super::*;
use crate::apiserver::ApiServer;
use crate::options::ServerOptions;

fn rbac_server() -> ApiServer {
    ApiServer::new(ServerOptions {
        rbac: true,
        ..ServerOptions::default()
    })
}

/// Creates `object` at `path` as the admin (authentication is off, so every request is admin).
async fn post(api: &ApiServer, path: &str, object: serde_json::Value) {
    let request = Request::post(path)
        .header("content-type", "application/json")
        .body(Bytes::from(object.to_string()))
        .unwrap();
    let code = api.handle(request).await.status().as_u16();
    assert_eq!(code, 201, "{path}");
}

const RBAC: &str = "/apis/rbac.authorization.k8s.io/v1";

async fn role(api: &ApiServer, path: &str, name: &str, rules: serde_json::Value) {
    post(
        api,
        path,
        json!({"metadata": {"name": name}, "rules": rules}),
    )
    .await;
}

async fn binding(
    api: &ApiServer,
    path: &str,
    name: &str,
    role: (&str, &str),
    subject: serde_json::Value,
) {
    let (kind, role_name) = role;
    let body = json!({"metadata": {"name": name}, "subjects": [subject],
                      "roleRef": {"apiGroup": GROUP, "kind": kind, "name": role_name}});
    post(api, path, body).await;
}

fn ask(user: &UserInfo, verb: &str, ns: &str, resource: &str) -> Attributes {
    Attributes {
        user: user.clone(),
        verb: verb.into(),
        namespace: ns.into(),
        resource: resource.into(),
        ..Attributes::default()
    }
}

fn sa_user(ns: &str, name: &str) -> UserInfo {
    UserInfo::new(
        format!("system:serviceaccount:{ns}:{name}"),
        "",
        &["system:serviceaccounts", "system:authenticated"],
    )
}

#[tokio::test]
async fn masters_are_allowed_everything_with_an_empty_reason() {
    let api = rbac_server();
    let admin = UserInfo::admin();
    assert_eq!(
        api.inner
            .authorizer
            .authorize(&ask(&admin, "escalate", "", "nodes")),
        Decision::Allow {
            reason: String::new()
        }
    );
}

#[tokio::test]
async fn a_user_without_bindings_has_no_opinion_and_the_bootstrap_roles_allow_discovery() {
    let api = rbac_server();
    let nobody = UserInfo::new("nobody", "", &["system:authenticated"]);
    assert_eq!(
        api.inner
            .authorizer
            .authorize(&ask(&nobody, "list", "default", "pods")),
        Decision::NoOpinion {
            reason: String::new()
        }
    );
    let discovery = Attributes {
        user: nobody.clone(),
        verb: "get".into(),
        path: "/apis/apps/v1".into(),
        ..Attributes::default()
    };
    assert_eq!(
        api.inner.authorizer.authorize(&discovery),
        Decision::Allow {
            reason: r#"RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" to Group "system:authenticated""#.into()
        }
    );
}

#[tokio::test]
async fn cluster_role_bindings_apply_in_every_namespace_and_at_cluster_scope() {
    let api = rbac_server();
    role(
        &api,
        &format!("{RBAC}/clusterroles"),
        "cm",
        json!([{"verbs": ["list"], "apiGroups": [""], "resources": ["configmaps"]}]),
    )
    .await;
    let subject = json!({"kind": "ServiceAccount", "name": "bot", "namespace": "team"});
    binding(
        &api,
        &format!("{RBAC}/clusterrolebindings"),
        "crb",
        ("ClusterRole", "cm"),
        subject,
    )
    .await;
    let bot = sa_user("team", "bot");
    for ns in ["", "default", "other"] {
        assert_eq!(
            api.inner.authorizer.authorize(&ask(&bot, "list", ns, "configmaps")),
            Decision::Allow {
                reason: r#"RBAC: allowed by ClusterRoleBinding "crb" of ClusterRole "cm" to ServiceAccount "bot/team""#.into()
            },
            "{ns}"
        );
    }
    let other = sa_user("elsewhere", "bot");
    assert!(matches!(
        api.inner
            .authorizer
            .authorize(&ask(&other, "list", "", "configmaps")),
        Decision::NoOpinion { .. }
    ));
}

#[tokio::test]
async fn role_bindings_apply_only_in_their_namespace_and_default_the_subject_namespace() {
    let api = rbac_server();
    post(
        &api,
        "/api/v1/namespaces",
        json!({"metadata": {"name": "team"}}),
    )
    .await;
    role(
        &api,
        &format!("{RBAC}/namespaces/team/roles"),
        "leases",
        json!([{"verbs": ["get"], "apiGroups": ["coordination.k8s.io"], "resources": ["leases"]}]),
    )
    .await;
    binding(
        &api,
        &format!("{RBAC}/namespaces/team/rolebindings"),
        "rb",
        ("Role", "leases"),
        json!({"kind": "ServiceAccount", "name": "bot"}),
    )
    .await;
    let bot = sa_user("team", "bot");
    let mut lease = ask(&bot, "get", "team", "leases");
    lease.group = "coordination.k8s.io".into();
    assert_eq!(
        api.inner.authorizer.authorize(&lease),
        Decision::Allow {
            reason: r#"RBAC: allowed by RoleBinding "rb/team" of Role "leases" to ServiceAccount "bot/team""#.into()
        }
    );
    lease.namespace = "default".into();
    assert!(matches!(
        api.inner.authorizer.authorize(&lease),
        Decision::NoOpinion { .. }
    ));
    lease.namespace = String::new();
    assert!(matches!(
        api.inner.authorizer.authorize(&lease),
        Decision::NoOpinion { .. }
    ));
}

#[tokio::test]
async fn users_and_groups_are_matched_by_name() {
    let api = rbac_server();
    role(
        &api,
        &format!("{RBAC}/clusterroles"),
        "nodes",
        json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["nodes"]}]),
    )
    .await;
    binding(
        &api,
        &format!("{RBAC}/clusterrolebindings"),
        "u",
        ("ClusterRole", "nodes"),
        json!({"kind": "User", "name": "alice"}),
    )
    .await;
    binding(
        &api,
        &format!("{RBAC}/clusterrolebindings"),
        "g",
        ("ClusterRole", "nodes"),
        json!({"kind": "Group", "name": "ops"}),
    )
    .await;
    let allowed = |user: UserInfo| {
        matches!(
            api.inner
                .authorizer
                .authorize(&ask(&user, "get", "", "nodes")),
            Decision::Allow { .. }
        )
    };
    assert!(allowed(UserInfo::new("alice", "", &[])));
    assert!(allowed(UserInfo::new("bob", "", &["ops"])));
    assert!(!allowed(UserInfo::new("bob", "", &["dev"])));
}

#[tokio::test]
async fn rules_review_lists_bound_rules_and_reports_missing_roles() {
    let api = rbac_server();
    binding(
        &api,
        &format!("{RBAC}/clusterrolebindings"),
        "dangling",
        ("ClusterRole", "gone"),
        json!({"kind": "User", "name": "alice"}),
    )
    .await;
    let rules = api.inner.authorizer.rules_for(
        &UserInfo::new("alice", "", &["system:authenticated"]),
        "default",
    );
    assert!(rules.incomplete);
    assert_eq!(
        rules.evaluation_error,
        r#"clusterrole.rbac.authorization.k8s.io "gone" not found"#
    );
    let resources: Vec<Vec<String>> = rules
        .resource_rules
        .iter()
        .map(|r| r.resources.clone())
        .collect();
    assert_eq!(
        resources,
        vec![
            vec![
                "selfsubjectaccessreviews".to_string(),
                "selfsubjectrulesreviews".to_string()
            ],
            vec!["selfsubjectreviews".to_string()]
        ]
    );
    assert_eq!(rules.non_resource_rules.len(), 2);
}
