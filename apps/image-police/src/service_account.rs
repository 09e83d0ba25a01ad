//! Running as a ServiceAccount from outside the cluster: a token from the TokenRequest API
//! (`POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token`, what `kubectl create token`
//! does) and a kubeconfig that uses it. `--embedded` and the e2e suite run the controller this way,
//! so it has exactly the permissions `deploy/rbac.yaml` grants its ServiceAccount, as in a cluster
//! where the kubelet mounts such a token into the pod.

use k8s_openapi::api::core::v1::ServiceAccount;
use kubegen_client::{Client, CreateOptions, ResourceClient};
use serde_json::{Value, json};

/// The controller's ServiceAccount (deploy/sa.yaml) and the namespace it lives in.
pub const SERVICE_ACCOUNT: (&str, &str) = ("image-police", "image-police");

/// Why no token or kubeconfig could be made.
#[derive(Debug, thiserror::Error)]
pub enum ServiceAccountError {
    /// The TokenRequest failed (no such ServiceAccount, not allowed, ...).
    #[error("requesting a token for ServiceAccount {namespace}/{name} failed")]
    TokenRequestFailed {
        /// The ServiceAccount's namespace.
        namespace: String,
        /// The ServiceAccount's name.
        name: String,
        /// The client's error (boxed: it is large and rare).
        #[source]
        source: Box<kubegen_client::Error>,
    },
    /// The answer held no `status.token`, or the kubeconfig could not be rewritten.
    #[error("{0}")]
    Malformed(String),
}

/// Asks the server for a token of ServiceAccount `namespace/name` (valid one hour).
///
/// # Errors
/// [`ServiceAccountError`] naming the ServiceAccount.
pub async fn issue_token(
    client: &Client,
    namespace: &str,
    name: &str,
) -> Result<String, ServiceAccountError> {
    let failed = |source| ServiceAccountError::TokenRequestFailed {
        namespace: namespace.to_owned(),
        name: name.to_owned(),
        source: Box::new(source),
    };
    let body =
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}});
    // Read as JSON: k8s-openapi's TokenRequest differs between Kubernetes versions.
    let accounts = ResourceClient::<ServiceAccount>::namespaced(client.clone(), namespace);
    let answer: Value = accounts
        .create_subresource(name, "token", &body, &CreateOptions::default())
        .await
        .map_err(failed)?;
    answer["status"]["token"]
        .as_str()
        .filter(|token| !token.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| {
            ServiceAccountError::Malformed(format!(
                "the TokenRequest for {namespace}/{name} answered no status.token"
            ))
        })
}

/// `kubeconfig` (YAML) with its current context's user replaced by `token` and its namespace
/// set to `namespace`: the same cluster, as the ServiceAccount.
///
/// # Errors
/// [`ServiceAccountError::Malformed`] when the kubeconfig has no usable current context.
pub fn kubeconfig_with_token(
    kubeconfig: &str,
    token: &str,
    namespace: &str,
) -> Result<String, ServiceAccountError> {
    let malformed = |what: &str| ServiceAccountError::Malformed(format!("kubeconfig: {what}"));
    let mut config: Value =
        serde_yaml::from_str(kubeconfig).map_err(|e| malformed(&e.to_string()))?;
    let current = config["current-context"]
        .as_str()
        .ok_or_else(|| malformed("no current-context"))?
        .to_owned();
    let contexts = config["contexts"]
        .as_array_mut()
        .ok_or_else(|| malformed("no contexts"))?;
    let context = contexts
        .iter_mut()
        .find(|c| c["name"] == current.as_str())
        .ok_or_else(|| malformed("the current context is not listed"))?;
    let user = format!("{current}-service-account");
    context["context"]["user"] = user.clone().into();
    context["context"]["namespace"] = namespace.into();
    let users = config["users"]
        .as_array_mut()
        .ok_or_else(|| malformed("no users"))?;
    users.push(json!({"name": user, "user": {"token": token}}));
    serde_yaml::to_string(&config).map_err(|e| malformed(&e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_current_context_switches_to_the_token_user_and_namespace() {
        let admin = "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters: [{name: k, cluster: {server: 'https://x'}}]\n\
                     contexts: [{name: c, context: {cluster: k, user: admin}}, {name: d, context: {cluster: k, user: admin}}]\n\
                     users: [{name: admin, user: {token: root}}]\n";
        let rewritten = kubeconfig_with_token(admin, "sa-token", "image-police")
            .unwrap_or_else(|e| panic!("{e}"));
        let config: Value = serde_yaml::from_str(&rewritten).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            config["contexts"][0]["context"],
            json!({"cluster": "k", "user": "c-service-account", "namespace": "image-police"})
        );
        assert_eq!(config["contexts"][1]["context"]["user"], "admin");
        assert_eq!(
            config["users"][1],
            json!({"name": "c-service-account", "user": {"token": "sa-token"}})
        );
        assert_eq!(config["clusters"][0]["cluster"]["server"], "https://x");
    }

    #[test]
    fn a_kubeconfig_without_its_current_context_is_an_error() {
        let broken = "current-context: missing\ncontexts: []\nusers: []\n";
        let result = kubeconfig_with_token(broken, "t", "ns");
        assert_eq!(
            result.map_err(|e| e.to_string()),
            Err("kubeconfig: the current context is not listed".to_owned())
        );
    }
}
