//! Running as a ServiceAccount from outside the cluster: a token from the TokenRequest API
//! (`POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token`, what `kubectl create token`
//! does) and a kubeconfig that uses it. An operator's `--embedded` mode (`kubegen-embedded`) and
//! its e2e tests run the operator this way, so it has exactly the permissions its RBAC manifests
//! grant its ServiceAccount, as in a cluster where the kubelet mounts such a token into the pod.
//!
//! Here and not in a test-support crate because it works on any server, a real cluster
//! included (an e2e suite runs a controller as its ServiceAccount there too), and needs nothing
//! but the client.

use k8s_openapi::api::core::v1::ServiceAccount;
use kubegen_client::{Client, CreateOptions, ResourceClient};
use serde_json::{Value, json};

use crate::error::Error;

/// Asks the server for a token of ServiceAccount `namespace/name` (valid one hour).
///
/// # Errors
/// [`Error::TokenRequestFailed`] or [`Error::TokenMissing`], naming the ServiceAccount.
pub async fn issue_token(client: &Client, namespace: &str, name: &str) -> Result<String, Error> {
    let body =
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}});
    // Read as JSON: k8s-openapi's TokenRequest differs between Kubernetes versions.
    let accounts = ResourceClient::<ServiceAccount>::namespaced(client.clone(), namespace);
    let answer: Value = accounts
        .create_subresource(name, "token", &body, &CreateOptions::default())
        .await
        .map_err(|source| Error::TokenRequestFailed {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            source: Box::new(source),
        })?;
    answer["status"]["token"]
        .as_str()
        .filter(|token| !token.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| Error::TokenMissing {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        })
}

/// `kubeconfig` (YAML) with its current context's user replaced by `token` and its namespace
/// set to `namespace`: the same cluster, as the ServiceAccount.
///
/// # Errors
/// [`Error::KubeconfigInvalid`] when the kubeconfig has no usable current context.
pub fn kubeconfig_with_token(
    kubeconfig: &str,
    token: &str,
    namespace: &str,
) -> Result<String, Error> {
    let invalid = |reason: &str| Error::KubeconfigInvalid {
        reason: reason.to_owned(),
    };
    let mut config: Value =
        serde_yaml::from_str(kubeconfig).map_err(|e| invalid(&e.to_string()))?;
    let current = config["current-context"]
        .as_str()
        .ok_or_else(|| invalid("no current-context"))?
        .to_owned();
    let contexts = config["contexts"]
        .as_array_mut()
        .ok_or_else(|| invalid("no contexts"))?;
    let context = contexts
        .iter_mut()
        .find(|c| c["name"] == current.as_str())
        .ok_or_else(|| invalid("the current context is not listed"))?;
    let user = format!("{current}-service-account");
    context["context"]["user"] = user.clone().into();
    context["context"]["namespace"] = namespace.into();
    let users = config["users"]
        .as_array_mut()
        .ok_or_else(|| invalid("no users"))?;
    users.push(json!({"name": user, "user": {"token": token}}));
    serde_yaml::to_string(&config).map_err(|e| invalid(&e.to_string()))
}

#[cfg(test)]
#[path = "service_account_tests.rs"]
mod tests;
