//! The default ClusterRoles and ClusterRoleBindings a real server creates at start-up
//! (apiserver `plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go`), limited to what
//! clients of this server need: `cluster-admin` for `system:masters`, and for every authenticated
//! user discovery (`system:discovery`), the access reviews (`system:basic-user`) and the public
//! health and version endpoints (`system:public-info-viewer`, unauthenticated users too), and for
//! every ServiceAccount the issuer's OpenID discovery (`system:service-account-issuer-discovery`,
//! so a workload can verify another's token). Rules,
//! labels and annotations are those of v1.36 (checked with `kubectl get clusterrole -o json`).

use serde_json::{Value, json};

use crate::apiserver::ApiServer;
use crate::authz::UserInfo;
use crate::handlers::create;
use crate::request::route::Target;
use crate::request::scope::Scope;
use crate::verb::Verb;

use super::rules::GROUP;

/// `(name, rules, subject groups)` of each default role and its binding of the same name.
fn defaults() -> Vec<(&'static str, Value, &'static [&'static str])> {
    let get_urls = |urls: &[&str]| json!([{"verbs": ["get"], "nonResourceURLs": urls}]);
    let public = ["/healthz", "/livez", "/readyz", "/version", "/version/"];
    let discovery = [
        "/api",
        "/api/*",
        "/apis",
        "/apis/*",
        "/healthz",
        "/livez",
        "/openapi",
        "/openapi/*",
        "/readyz",
        "/version",
        "/version/",
    ];
    vec![
        (
            "cluster-admin",
            json!([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
                   {"verbs": ["*"], "nonResourceURLs": ["*"]}]),
            &["system:masters"],
        ),
        (
            "system:discovery",
            get_urls(&discovery),
            &["system:authenticated"],
        ),
        (
            "system:basic-user",
            json!([{"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
                    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]},
                   {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"],
                    "resources": ["selfsubjectreviews"]}]),
            &["system:authenticated"],
        ),
        (
            "system:service-account-issuer-discovery",
            get_urls(&[
                "/.well-known/openid-configuration",
                "/.well-known/openid-configuration/",
                "/openid/v1/jwks",
                "/openid/v1/jwks/",
            ]),
            &["system:serviceaccounts"],
        ),
        (
            "system:public-info-viewer",
            get_urls(&public),
            &["system:authenticated", "system:unauthenticated"],
        ),
    ]
}

/// Creates the default roles and bindings in `api`'s store.
pub(crate) fn bootstrap(api: &ApiServer) {
    let metadata = |name: &str| {
        json!({"name": name,
               "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
               "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}})
    };
    for (name, rules, groups) in defaults() {
        let subjects: Vec<Value> = groups
            .iter()
            .map(|g| json!({"kind": "Group", "apiGroup": GROUP, "name": g}))
            .collect();
        let role = json!({"kind": "ClusterRole", "apiVersion": format!("{GROUP}/v1"),
                          "metadata": metadata(name), "rules": rules});
        let binding = json!({"kind": "ClusterRoleBinding", "apiVersion": format!("{GROUP}/v1"),
                             "metadata": metadata(name), "subjects": subjects,
                             "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": name}});
        for (plural, object) in [("clusterroles", role), ("clusterrolebindings", binding)] {
            let def = api.inner.storage.lock().registry.get(GROUP, "v1", plural);
            let Some(def) = def else { continue };
            // Restored from a data directory already.
            let key = (String::new(), name.to_string());
            if api
                .inner
                .storage
                .lock()
                .store
                .get(&def.key(), &key)
                .is_some()
            {
                continue;
            }
            let target = Target {
                def,
                namespace: None,
                name: None,
                subresource: None,
                watch_path: false,
            };
            let scope = Scope {
                target,
                audit: crate::audit::RequestAudit::default(),
                verb: Verb::Create,
                user: UserInfo::admin(),
                dry_run: false,
                request_version: None,
                authorizer: std::sync::Arc::new(crate::authz::AllowAll),
                format: crate::request::negotiation::WireFormat::Json,
                // A real server's bootstrap objects are managed by `kube-apiserver`.
                writer: kubegen_apply::Writer {
                    field_manager: Some("kube-apiserver".into()),
                    ..Default::default()
                },
            };
            if let Err(e) = create::bootstrap(&api.inner.storage, &scope, object) {
                tracing::warn!(%name, %plural, error = %e.message, "bootstrapping RBAC failed");
            }
        }
    }
}
