//! A provider over SIG-Multicluster's cluster inventory: every `ClusterProfile`
//! (`multicluster.x-k8s.io/v1alpha1`, namespaced) in the hub that matches a label selector is one
//! member cluster, engaged while its control plane is healthy. The counterpart of
//! multicluster-runtime's `providers/cluster-inventory-api` (its `provider.go` and
//! `kubeconfigstrategy/accessprovider.go`) and of cluster-inventory-api's `pkg/access/config.go`,
//! which turn a profile plus the consumer's provider file into a client configuration.
//!
//! # How a profile becomes a client configuration
//! The cluster manager (OCM, Fleet, Karmada, ...) publishes in `status.accessProviders` (and in
//! the deprecated `status.credentialProviders`, which a same-named access provider overrides) a
//! list of `{name, cluster}`, where `cluster` is a kubeconfig cluster entry: server, CA data,
//! extensions. The consumer (this process) brings an [`AccessConfig`], the JSON file
//! multicluster-runtime takes with `--clusterprofile-provider-file`: for each provider name, the
//! exec plugin that obtains credentials for it. The first provider of the consumer's file that the
//! profile also lists wins; its plugin becomes the kubeconfig user, the profile's cluster entry
//! the kubeconfig cluster, and kubegen-client's exec support runs the plugin (with the cluster's
//! `client.authentication.k8s.io/exec` extension as `spec.cluster.config`, so one plugin binary
//! knows which cluster it is asked about). The profile's
//! `clusterprofiles.multicluster.x-k8s.io/exec/additional-args` and `.../additional-envs`
//! extensions (KEP-5339) are added to the plugin's arguments and environment only when the
//! consumer's policy for that provider allows it (`Append`; `AppendIfNotExists` or `Replace`).
//!
//! # When a cluster is engaged
//! - Engaged: the profile matches, its `ControlPlaneHealthy` condition is `True`, and a client
//!   configuration could be built. The cluster's name is `<namespace>/<name>` of the profile
//!   (multicluster-runtime's name too: two namespaces may hold profiles of the same name).
//! - Re-engaged: what reaches the cluster changed (server, CA, extensions, the chosen provider):
//!   a rotated CA or a moved endpoint replaces the cluster with one built on the new data.
//! - Disengaged: the profile is deleted, stops matching, turns unhealthy (condition `False`,
//!   `Unknown` or absent), or loses every access provider the consumer knows.
//!
//! # Differences from multicluster-runtime
//! multicluster-runtime leaves an engaged cluster engaged when its profile turns unhealthy (it
//! only declines to engage an unhealthy one). Here an unhealthy profile disengages its cluster:
//! the cluster manager's verdict is the inventory's truth, and the fleet's own probe
//! (`engagement.rs`) already covers the short outages the manager has not noticed. A profile
//! that turns healthy again is engaged again and its caches catch up.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_core::{NamespaceResourceScope, Resource};
use kubegen_client::Client;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::Error;
use crate::multicluster::provider::{
    ClusterSink, HubSelection, Provider, fingerprint, follow_hub, kubeconfig_to_config,
};

/// The condition a healthy profile carries with status `True`.
pub const CONTROL_PLANE_HEALTHY: &str = "ControlPlaneHealthy";
/// The label a cluster manager puts on its profiles, valued with its name.
pub const CLUSTER_MANAGER_LABEL: &str = "x-k8s.io/cluster-manager";
/// The profile extension holding extra plugin arguments (a list of strings).
const ADDITIONAL_ARGS: &str = "clusterprofiles.multicluster.x-k8s.io/exec/additional-args";
/// The profile extension holding extra plugin environment variables (a map).
const ADDITIONAL_ENVS: &str = "clusterprofiles.multicluster.x-k8s.io/exec/additional-envs";

/// The parts of a `ClusterProfile` this provider reads; the rest of the object is kept as is.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterProfile {
    /// `multicluster.x-k8s.io/v1alpha1`.
    #[serde(default)]
    pub api_version: String,
    /// `ClusterProfile`.
    #[serde(default)]
    pub kind: String,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The spec (display name, cluster manager): not read, kept as served.
    #[serde(default)]
    pub spec: Value,
    /// Conditions and access providers, as the cluster manager reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ClusterProfileStatus>,
}

/// A profile's status, the fields this provider reads.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterProfileStatus {
    /// Conditions; [`CONTROL_PLANE_HEALTHY`] decides engagement.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub conditions: Vec<ProfileCondition>,
    /// How to reach the cluster, per access provider.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub access_providers: Vec<AccessProvider>,
    /// The deprecated name of `accessProviders`, still read.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub credential_providers: Vec<AccessProvider>,
}

/// A condition of a profile: its type and status.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ProfileCondition {
    /// The condition's type, e.g. [`CONTROL_PLANE_HEALTHY`].
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
}

/// One way to reach the cluster: a provider name and a kubeconfig cluster entry.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct AccessProvider {
    /// The provider's name, matched against the consumer's [`AccessConfig`].
    pub name: String,
    /// A kubeconfig `cluster` entry (`server`, `certificate-authority-data`, `extensions`, ...).
    #[serde(default)]
    pub cluster: Value,
}

fn null_as_empty<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Vec<T>, D::Error> {
    Ok(Option::<Vec<T>>::deserialize(d)?.unwrap_or_default())
}

impl Resource for ClusterProfile {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(_: &()) -> std::borrow::Cow<'_, str> {
        "ClusterProfile".into()
    }
    fn group(_: &()) -> std::borrow::Cow<'_, str> {
        "multicluster.x-k8s.io".into()
    }
    fn version(_: &()) -> std::borrow::Cow<'_, str> {
        "v1alpha1".into()
    }
    fn plural(_: &()) -> std::borrow::Cow<'_, str> {
        "clusterprofiles".into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl ClusterProfile {
    /// Whether the cluster manager reports the control plane healthy.
    pub fn is_healthy(&self) -> bool {
        self.status.as_ref().is_some_and(|status| {
            status
                .conditions
                .iter()
                .any(|c| c.type_ == CONTROL_PLANE_HEALTHY && c.status == "True")
        })
    }

    /// The access provider named `name`: from `accessProviders`, else from the deprecated
    /// `credentialProviders`.
    fn access_provider(&self, name: &str) -> Option<&AccessProvider> {
        let status = self.status.as_ref()?;
        let named = |list: &'_ [AccessProvider]| list.iter().position(|p| p.name == name);
        named(&status.access_providers)
            .map(|at| &status.access_providers[at])
            .or_else(|| {
                named(&status.credential_providers).map(|at| &status.credential_providers[at])
            })
    }
}

/// The consumer's side: for each access provider name, the exec plugin that gets credentials.
/// The JSON of cluster-inventory-api's provider file:
/// `{"providers": [{"name": "secretreader", "execConfig": {"apiVersion": ..., "command": ...}}]}`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct AccessConfig {
    /// In order of preference.
    pub providers: Vec<CredentialPlugin>,
}

/// One provider of an [`AccessConfig`].
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CredentialPlugin {
    /// The access provider name it serves.
    pub name: String,
    /// A kubeconfig `exec` entry (`apiVersion`, `command`, `args`, `env`, `provideClusterInfo`).
    pub exec_config: Value,
    /// `Append` adds the profile's additional-args extension; `Ignore` (default) does not.
    #[serde(default, rename = "profileSourcedCLIArgsPolicy")]
    pub profile_sourced_cli_args_policy: String,
    /// `AppendIfNotExists` or `Replace` merge the profile's additional-envs extension (the
    /// plugin's own value wins, resp. the profile's); `Ignore` (default) leaves it out.
    #[serde(default)]
    pub profile_sourced_env_vars_policy: String,
}

impl AccessConfig {
    /// Reads the provider file at `path`.
    ///
    /// # Errors
    /// [`Error::ProviderFailed`] naming the file when it cannot be read or is not such JSON.
    pub fn from_file(path: &Path) -> Result<AccessConfig, Error> {
        let failed = |reason: String| Error::ProviderFailed {
            provider: "cluster-profiles".to_owned(),
            reason: format!("{}: {reason}", path.display()),
        };
        let text = std::fs::read_to_string(path).map_err(|e| failed(e.to_string()))?;
        serde_json::from_str(&text).map_err(|e| failed(e.to_string()))
    }

    /// The kubeconfig (as JSON) that reaches the cluster of `profile`: the profile's cluster entry
    /// of the first provider both sides know, and this side's plugin for it.
    fn kubeconfig(&self, profile: &ClusterProfile) -> Result<Value, String> {
        let (plugin, access) = self
            .providers
            .iter()
            .find_map(|plugin| Some((plugin, profile.access_provider(&plugin.name)?)))
            .ok_or_else(|| {
                let known: Vec<&str> = self.providers.iter().map(|p| p.name.as_str()).collect();
                format!(
                    "no access provider of the profile is one of {}",
                    known.join(", ")
                )
            })?;
        let mut exec = plugin.exec_config.clone();
        if !exec.is_object() {
            return Err(format!(
                "provider {}: execConfig is not an object",
                plugin.name
            ));
        }
        let extensions = access.cluster["extensions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for extension in &extensions {
            let value = &extension["extension"];
            match extension["name"].as_str() {
                Some(ADDITIONAL_ARGS) => add_args(&mut exec, value, plugin)?,
                Some(ADDITIONAL_ENVS) => add_envs(&mut exec, value, plugin)?,
                _ => {}
            }
        }
        // The consumer never talks to a terminal (client-go's access.BuildConfigFromCP too).
        exec["interactiveMode"] = json!("Never");
        Ok(json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "profile", "cluster": access.cluster}],
            "users": [{"name": plugin.name, "user": {"exec": exec}}],
            "contexts": [{"name": "profile", "context": {"cluster": "profile", "user": plugin.name}}],
            "current-context": "profile",
        }))
    }
}

/// Appends the profile's extra arguments under the `Append` policy.
fn add_args(exec: &mut Value, extra: &Value, plugin: &CredentialPlugin) -> Result<(), String> {
    match plugin.profile_sourced_cli_args_policy.as_str() {
        "" | "Ignore" => Ok(()),
        "Append" => {
            let extra: Vec<String> = serde_json::from_value(extra.clone())
                .map_err(|e| format!("{ADDITIONAL_ARGS}: not a list of strings: {e}"))?;
            let mut args: Vec<String> =
                serde_json::from_value(exec["args"].clone()).unwrap_or_default();
            args.extend(extra);
            exec["args"] = json!(args);
            Ok(())
        }
        other => Err(format!(
            "provider {}: unsupported profileSourcedCLIArgsPolicy {other:?}",
            plugin.name
        )),
    }
}

/// Merges the profile's extra environment variables under `AppendIfNotExists` (the plugin's own
/// value wins) or `Replace` (the profile's wins); sorted by name.
fn add_envs(exec: &mut Value, extra: &Value, plugin: &CredentialPlugin) -> Result<(), String> {
    let profile_wins = match plugin.profile_sourced_env_vars_policy.as_str() {
        "" | "Ignore" => return Ok(()),
        "AppendIfNotExists" => false,
        "Replace" => true,
        other => {
            return Err(format!(
                "provider {}: unsupported profileSourcedEnvVarsPolicy {other:?}",
                plugin.name
            ));
        }
    };
    let mut merged: BTreeMap<String, String> = serde_json::from_value(extra.clone())
        .map_err(|e| format!("{ADDITIONAL_ENVS}: not a map of strings: {e}"))?;
    let own = exec["env"].as_array().cloned().unwrap_or_default();
    for var in own {
        let (Some(name), Some(value)) = (var["name"].as_str(), var["value"].as_str()) else {
            continue;
        };
        if !profile_wins || !merged.contains_key(name) {
            merged.insert(name.to_owned(), value.to_owned());
        }
    }
    let env: Vec<Value> = merged
        .into_iter()
        .map(|(name, value)| json!({"name": name, "value": value}))
        .collect();
    exec["env"] = json!(env);
    Ok(())
}

/// Which profiles, and how to reach their clusters.
#[derive(Clone, Debug, Default)]
pub struct ClusterProfileOptions {
    namespace: Option<String>,
    label_selector: Option<String>,
    access: AccessConfig,
}

impl ClusterProfileOptions {
    /// Profiles in every namespace, their clusters reached through `access`.
    pub fn new(access: AccessConfig) -> ClusterProfileOptions {
        ClusterProfileOptions {
            access,
            ..ClusterProfileOptions::default()
        }
    }

    /// Only profiles in `namespace` (a ClusterSet's namespace, by the API's convention).
    #[must_use]
    pub fn namespace(mut self, namespace: &str) -> ClusterProfileOptions {
        self.namespace = Some(namespace.to_owned());
        self
    }

    /// Only profiles matching `selector` (`kubectl -l` syntax), e.g. one cluster manager's:
    /// `x-k8s.io/cluster-manager=ocm` ([`CLUSTER_MANAGER_LABEL`]).
    #[must_use]
    pub fn label_selector(mut self, selector: &str) -> ClusterProfileOptions {
        self.label_selector = Some(selector.to_owned());
        self
    }
}

/// Member clusters from the hub's ClusterProfiles. See the module docs.
#[derive(Clone, Debug)]
pub struct ClusterProfiles {
    hub: Client,
    options: ClusterProfileOptions,
}

impl ClusterProfiles {
    /// Profiles chosen by `options`, read with `hub` (the manager's client, usually).
    pub fn new(hub: Client, options: ClusterProfileOptions) -> ClusterProfiles {
        ClusterProfiles { hub, options }
    }

    /// The cluster a profile stands for, its configuration and fingerprint; `Err` says why it
    /// is not engaged.
    fn cluster_of(
        &self,
        profile: &ClusterProfile,
    ) -> Result<(kubegen_client::Config, u64), String> {
        if !profile.is_healthy() {
            return Err(format!("{CONTROL_PLANE_HEALTHY} is not True"));
        }
        let kubeconfig = self.options.access.kubeconfig(profile)?;
        let text = kubeconfig.to_string();
        let meta = &profile.metadata;
        // No folder in the origin: a relative plugin command runs from the working directory,
        // as client-go's does.
        let origin = format!(
            "ClusterProfile {}.{}",
            meta.namespace.as_deref().unwrap_or_default(),
            meta.name.as_deref().unwrap_or_default()
        );
        let config = kubeconfig_to_config(&profile_name(profile), &text, Path::new(&origin))
            .map_err(|error| error.to_string())?;
        Ok((config, fingerprint(text.as_bytes())))
    }

    /// Reports what changed between the cached profiles and `seen` (cluster → fingerprint).
    fn pass(
        &self,
        profiles: &[Arc<ClusterProfile>],
        sink: &ClusterSink,
        seen: &mut BTreeMap<String, u64>,
    ) {
        let mut now = BTreeMap::new();
        for profile in profiles {
            let name = profile_name(profile);
            match self.cluster_of(profile) {
                Ok((config, print)) => {
                    if seen.get(&name) != Some(&print) {
                        sink.engage(&name, config, print);
                    }
                    now.insert(name, print);
                }
                Err(reason) => {
                    tracing::info!(
                        profile = name,
                        reason,
                        "ClusterProfile's cluster not engaged"
                    );
                }
            }
        }
        for gone in seen.keys().filter(|name| !now.contains_key(*name)) {
            sink.disengage(gone);
        }
        *seen = now;
    }
}

/// `<namespace>/<name>` of a profile.
fn profile_name(profile: &ClusterProfile) -> String {
    let meta = &profile.metadata;
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}

impl Provider for ClusterProfiles {
    fn name(&self) -> &str {
        "cluster-profiles"
    }

    fn run(
        &self,
        sink: ClusterSink,
        stop: BoxFuture<'static, ()>,
    ) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(async move {
            let selection = HubSelection {
                provider: self.name(),
                namespace: self.options.namespace.clone(),
                label_selector: self.options.label_selector.clone(),
            };
            let mut seen = BTreeMap::new();
            follow_hub::<ClusterProfile>(&self.hub, selection, stop, |profiles| {
                self.pass(profiles, &sink, &mut seen);
            })
            .await
        })
    }
}

#[cfg(test)]
#[path = "cluster_profiles_tests.rs"]
mod tests;
