//! Which resources the server serves: the built-in kinds kubegen needs plus everything registered
//! from a CustomResourceDefinition or [`crate::ApiServer::register`].
//!
//! Mirrors the role of kube-apiserver's REST storage map (one `genericregistry.Store` per
//! group/version/resource) and of the apiextensions server's per-CRD handler: routing, discovery and
//! validation all consult this table. What a kind does differently from the generic verbs is its
//! strategy's (`crate::kinds::strategy_for`), looked up by the same group and plural.

use std::collections::BTreeMap;
use std::sync::Arc;

pub(crate) mod printer_column;
pub(crate) mod scale;

use crate::registry::printer_column::PrinterColumn;
use crate::registry::scale::ScaleSubresource;
use crate::verb::Verb;

/// How `metadata.name` is validated for a kind (apimachinery `path.ValidatePathSegmentName` plus the
/// kind's own rule).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameRule {
    /// RFC 1123 subdomain (most kinds, all custom resources).
    #[default]
    Subdomain,
    /// RFC 1123 label (namespaces).
    Label,
    /// RFC 1035 label (services).
    Dns1035Label,
    /// Any path-segment-safe name (events, which embed dots and colons).
    PathSegment,
}

/// A served resource: what discovery reports and what the handlers need to know about a kind.
///
/// Build one with struct-update syntax; unset fields take the behaviour the real server has for a
/// custom resource (generation tracked, delete returns the object, no strategic merge, all verbs):
/// ```
/// use kubegen_testserver::ResourceDefinition;
/// let whitelists = ResourceDefinition {
///     group: "police.example.com".into(),
///     version: "v1beta1".into(),
///     kind: "WhiteList".into(),
///     plural: "whitelists".into(),
///     namespaced: true,
///     status_subresource: true,
///     ..Default::default()
/// };
/// assert_eq!(whitelists.api_version(), "police.example.com/v1beta1");
/// ```
/// (Not `#[non_exhaustive]` on purpose: the literal above is how fakes register their kinds;
/// fields added later get defaults, so `..Default::default()` keeps working.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceDefinition {
    /// API group, `""` for the core group.
    pub group: String,
    /// API version, e.g. `v1beta1`.
    pub version: String,
    /// Kind, e.g. `WhiteList`.
    pub kind: String,
    /// Plural resource name used in URLs, e.g. `whitelists`.
    pub plural: String,
    /// Singular name (discovery `singularName`); defaults to the lower-cased kind when empty.
    pub singular: String,
    /// Short names reported by discovery (`kubectl get wl`).
    pub short_names: Vec<String>,
    /// Categories reported by discovery (e.g. `all`).
    pub categories: Vec<String>,
    /// Namespaced (true) or cluster-scoped (false).
    pub namespaced: bool,
    /// Whether `<plural>/status` exists. When true the main endpoint ignores status changes and
    /// `/status` changes only status, like the real server.
    pub status_subresource: bool,
    /// Whether `metadata.generation` is maintained (set to 1 on create, bumped on spec changes).
    pub tracks_generation: bool,
    /// Whether a delete returns the deleted object (custom resources, pods) instead of a `Status`.
    pub delete_returns_object: bool,
    /// Field selector labels allowed besides `metadata.name` and `metadata.namespace`, as dotted
    /// JSON paths (`spec.nodeName`). Others are rejected with 400 like the real server. (The
    /// built-ins with their own field label conversion list every label here, `metadata.*`
    /// included.)
    pub selectable_fields: Vec<String>,
    /// How names are validated.
    pub name_rule: NameRule,
    /// Whether strategic merge patches are accepted (built-in kinds); custom resources reject them
    /// with 415 like the real server.
    pub strategic_merge: bool,
    /// Verbs reported by discovery and accepted by the router. Empty means all the kind's
    /// storage serves (all eight, unless the kind's own rules say fewer).
    pub verbs: Vec<String>,
    /// Columns of Table responses after `Name` (a CRD version's `additionalPrinterColumns`);
    /// empty means `Age`. Built-in kinds use their upstream printers instead.
    pub printer_columns: Vec<PrinterColumn>,
    /// Whether `<plural>/scale` exists, and where the replicas live.
    pub scale_subresource: Option<ScaleSubresource>,
}

impl Default for ResourceDefinition {
    fn default() -> Self {
        ResourceDefinition {
            group: String::new(),
            version: String::new(),
            kind: String::new(),
            plural: String::new(),
            singular: String::new(),
            short_names: Vec::new(),
            categories: Vec::new(),
            namespaced: false,
            status_subresource: false,
            tracks_generation: true,
            delete_returns_object: true,
            selectable_fields: Vec::new(),
            name_rule: NameRule::Subdomain,
            strategic_merge: false,
            verbs: Vec::new(),
            printer_columns: Vec::new(),
            scale_subresource: None,
        }
    }
}

impl ResourceDefinition {
    /// `group/version` or `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Whether this is `customresourcedefinitions.apiextensions.k8s.io`.
    pub(crate) fn is_crd(&self) -> bool {
        self.group == "apiextensions.k8s.io" && self.plural == "customresourcedefinitions"
    }

    /// Storage/lookup key of this resource.
    pub(crate) fn key(&self) -> ResourceKey {
        ResourceKey::new(&self.group, &self.version, &self.plural)
    }

    /// Discovery `singularName`.
    pub(crate) fn singular_name(&self) -> String {
        if self.singular.is_empty() {
            self.kind.to_lowercase()
        } else {
            self.singular.clone()
        }
    }

    /// Whether the definition's own `verbs` let the router accept `verb` (the kind's strategy
    /// may serve fewer, `crate::kinds::Strategy::verbs`).
    pub(crate) fn allows(&self, verb: Verb) -> bool {
        self.verbs.is_empty() || self.verbs.iter().any(|v| v == verb.as_str())
    }

    /// Checks a field selector label; the error is the real server's message for it, which
    /// depends on whether the kind has its own field label conversion (core kinds, events, jobs)
    /// or the generic metadata-only one.
    pub(crate) fn check_field_label(&self, field: &str) -> Result<(), String> {
        let listed = self.selectable_fields.iter().any(|f| f == field);
        match field_label_style(&self.group, &self.plural) {
            _ if listed => Ok(()),
            FieldLabels::Converted => Err(format!("field label not supported: {field}")),
            FieldLabels::Job if field.starts_with("metadata.") => self.generic_label(field),
            FieldLabels::Job => Err(format!("field label \"{field}\" not supported for Job")),
            FieldLabels::Generic => self.generic_label(field),
        }
    }

    fn generic_label(&self, field: &str) -> Result<(), String> {
        if field == "metadata.name" || field == "metadata.namespace" {
            return Ok(());
        }
        Err(format!(
            "\"{field}\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        ))
    }
}

/// Group/version/plural: the identity of a served resource (and of its object collection).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct ResourceKey(Arc<str>);

impl ResourceKey {
    pub(crate) fn new(group: &str, version: &str, plural: &str) -> ResourceKey {
        ResourceKey(Arc::from(format!("{group}/{version}/{plural}")))
    }

    /// `group/version/plural` (`/v1/configmaps` for the core group).
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    /// The key [`ResourceKey::as_str`] wrote, if `text` has its three parts.
    pub(crate) fn parse(text: &str) -> Option<ResourceKey> {
        let mut parts = text.rsplitn(3, '/');
        let (plural, version, group) = (parts.next()?, parts.next()?, parts.next()?);
        (!plural.is_empty() && !version.is_empty())
            .then(|| ResourceKey::new(group, version, plural))
    }
}

/// All served resources.
///
/// # Invariants
/// - `by_key` keys equal `definition.key()` of their value.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    by_key: BTreeMap<ResourceKey, Arc<ResourceDefinition>>,
}

impl Registry {
    /// A registry holding the built-in kinds.
    pub(crate) fn with_builtins() -> Registry {
        let mut registry = Registry::default();
        for def in builtins() {
            registry.insert(def);
        }
        registry
    }

    /// Adds or replaces a resource.
    pub(crate) fn insert(&mut self, def: ResourceDefinition) {
        self.by_key.insert(def.key(), Arc::new(def));
    }

    /// Removes a resource; returns whether it existed.
    pub(crate) fn remove(&mut self, key: &ResourceKey) -> bool {
        self.by_key.remove(key).is_some()
    }

    /// Looks up by group, version and plural.
    pub(crate) fn get(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<Arc<ResourceDefinition>> {
        self.by_key
            .get(&ResourceKey::new(group, version, plural))
            .cloned()
    }

    /// All resources, sorted by group/version/plural.
    pub(crate) fn all(&self) -> impl Iterator<Item = &Arc<ResourceDefinition>> {
        self.by_key.values()
    }

    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        for (key, def) in &self.by_key {
            assert_eq!(*key, def.key());
        }
    }
}

struct Builtin {
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    short: &'static [&'static str],
    namespaced: bool,
    status: bool,
    generation: bool,
}

#[rustfmt::skip]
const BUILTINS: &[Builtin] = &[
    Builtin { group: "", version: "v1", kind: "Namespace", plural: "namespaces", short: &["ns"], namespaced: false, status: true, generation: false },
    Builtin { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps", short: &["cm"], namespaced: true, status: false, generation: false },
    Builtin { group: "", version: "v1", kind: "Secret", plural: "secrets", short: &[], namespaced: true, status: false, generation: false },
    Builtin { group: "", version: "v1", kind: "Pod", plural: "pods", short: &["po"], namespaced: true, status: true, generation: true },
    Builtin { group: "", version: "v1", kind: "Service", plural: "services", short: &["svc"], namespaced: true, status: true, generation: false },
    Builtin { group: "", version: "v1", kind: "ServiceAccount", plural: "serviceaccounts", short: &["sa"], namespaced: true, status: false, generation: false },
    Builtin { group: "", version: "v1", kind: "Node", plural: "nodes", short: &["no"], namespaced: false, status: true, generation: false },
    Builtin { group: "", version: "v1", kind: "PersistentVolumeClaim", plural: "persistentvolumeclaims", short: &["pvc"], namespaced: true, status: true, generation: false },
    Builtin { group: "", version: "v1", kind: "Event", plural: "events", short: &["ev"], namespaced: true, status: false, generation: false },
    Builtin { group: "events.k8s.io", version: "v1", kind: "Event", plural: "events", short: &["ev"], namespaced: true, status: false, generation: false },
    Builtin { group: "apps", version: "v1", kind: "Deployment", plural: "deployments", short: &["deploy"], namespaced: true, status: true, generation: true },
    Builtin { group: "apps", version: "v1", kind: "ReplicaSet", plural: "replicasets", short: &["rs"], namespaced: true, status: true, generation: true },
    Builtin { group: "apps", version: "v1", kind: "ControllerRevision", plural: "controllerrevisions", short: &[], namespaced: true, status: false, generation: false },
    Builtin { group: "apps", version: "v1", kind: "StatefulSet", plural: "statefulsets", short: &["sts"], namespaced: true, status: true, generation: true },
    Builtin { group: "apps", version: "v1", kind: "DaemonSet", plural: "daemonsets", short: &["ds"], namespaced: true, status: true, generation: true },
    Builtin { group: "batch", version: "v1", kind: "Job", plural: "jobs", short: &[], namespaced: true, status: true, generation: true },
    Builtin { group: "batch", version: "v1", kind: "CronJob", plural: "cronjobs", short: &["cj"], namespaced: true, status: true, generation: true },
    Builtin { group: "discovery.k8s.io", version: "v1", kind: "EndpointSlice", plural: "endpointslices", short: &[], namespaced: true, status: false, generation: true },
    Builtin { group: "coordination.k8s.io", version: "v1", kind: "Lease", plural: "leases", short: &[], namespaced: true, status: false, generation: false },
    Builtin { group: "authentication.k8s.io", version: "v1", kind: "SelfSubjectReview", plural: "selfsubjectreviews", short: &[], namespaced: false, status: false, generation: false },
    Builtin { group: "authentication.k8s.io", version: "v1", kind: "TokenReview", plural: "tokenreviews", short: &[], namespaced: false, status: false, generation: false },
    Builtin { group: "authorization.k8s.io", version: "v1", kind: "SelfSubjectAccessReview", plural: "selfsubjectaccessreviews", short: &[], namespaced: false, status: false, generation: false },
    Builtin { group: "authorization.k8s.io", version: "v1", kind: "SelfSubjectRulesReview", plural: "selfsubjectrulesreviews", short: &[], namespaced: false, status: false, generation: false },
    Builtin { group: "rbac.authorization.k8s.io", version: "v1", kind: "ClusterRole", plural: "clusterroles", short: &[], namespaced: false, status: false, generation: false },
    Builtin { group: "rbac.authorization.k8s.io", version: "v1", kind: "ClusterRoleBinding", plural: "clusterrolebindings", short: &[], namespaced: false, status: false, generation: false },
    Builtin { group: "rbac.authorization.k8s.io", version: "v1", kind: "Role", plural: "roles", short: &[], namespaced: true, status: false, generation: false },
    Builtin { group: "rbac.authorization.k8s.io", version: "v1", kind: "RoleBinding", plural: "rolebindings", short: &[], namespaced: true, status: false, generation: false },
    Builtin { group: "admissionregistration.k8s.io", version: "v1", kind: "MutatingWebhookConfiguration", plural: "mutatingwebhookconfigurations", short: &[], namespaced: false, status: false, generation: true },
    Builtin { group: "admissionregistration.k8s.io", version: "v1", kind: "ValidatingWebhookConfiguration", plural: "validatingwebhookconfigurations", short: &[], namespaced: false, status: false, generation: true },
    Builtin { group: "admissionregistration.k8s.io", version: "v1", kind: "ValidatingAdmissionPolicy", plural: "validatingadmissionpolicies", short: &[], namespaced: false, status: true, generation: true },
    Builtin { group: "admissionregistration.k8s.io", version: "v1", kind: "ValidatingAdmissionPolicyBinding", plural: "validatingadmissionpolicybindings", short: &[], namespaced: false, status: false, generation: true },
    Builtin { group: "admissionregistration.k8s.io", version: "v1", kind: "MutatingAdmissionPolicy", plural: "mutatingadmissionpolicies", short: &[], namespaced: false, status: false, generation: true },
    Builtin { group: "admissionregistration.k8s.io", version: "v1", kind: "MutatingAdmissionPolicyBinding", plural: "mutatingadmissionpolicybindings", short: &[], namespaced: false, status: false, generation: true },
    Builtin { group: "apiextensions.k8s.io", version: "v1", kind: "CustomResourceDefinition", plural: "customresourcedefinitions", short: &["crd", "crds"], namespaced: false, status: true, generation: true },
];

/// How a kind's field selector labels are checked (apimachinery's default
/// `DefaultMetaV1FieldSelectorConversion`, or the kind's own `AddFieldLabelConversionFunc`).
enum FieldLabels {
    /// `metadata.name`, `metadata.namespace` and the resource's `selectable_fields`.
    Generic,
    /// Exactly `selectable_fields`; anything else is "field label not supported".
    Converted,
    /// batch/v1 Jobs: metadata plus `status.successful`, with their own message.
    Job,
}

fn field_label_style(group: &str, plural: &str) -> FieldLabels {
    match (group, plural) {
        ("", "pods" | "nodes" | "events" | "namespaces" | "secrets" | "services")
        | ("events.k8s.io", "events") => FieldLabels::Converted,
        ("batch", "jobs") => FieldLabels::Job,
        _ => FieldLabels::Generic,
    }
}

/// The field selectors the real server supports for some built-ins (their field label
/// conversion functions in `pkg/apis/*/v1/conversion.go`).
fn builtin_fields(group: &str, plural: &str) -> Vec<String> {
    let fields: &[&str] = match (group, plural) {
        ("", "pods") => &[
            "metadata.name",
            "metadata.namespace",
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName",
        ],
        ("", "events") => &[
            "metadata.name",
            "metadata.namespace",
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        ("events.k8s.io", "events") => &[
            "metadata.name",
            "metadata.namespace",
            "regarding.kind",
            "regarding.namespace",
            "regarding.name",
            "regarding.uid",
            "regarding.apiVersion",
            "regarding.resourceVersion",
            "regarding.fieldPath",
            "reason",
            "reportingController",
            "type",
        ],
        ("", "secrets") => &["metadata.name", "metadata.namespace", "type"],
        ("", "namespaces") => &["metadata.name", "status.phase"],
        ("", "nodes") => &["metadata.name", "spec.unschedulable"],
        ("", "services") => &[
            "metadata.name",
            "metadata.namespace",
            "spec.clusterIP",
            "spec.type",
        ],
        ("batch", "jobs") => &["status.successful"],
        _ => &[],
    };
    fields.iter().map(|f| f.to_string()).collect()
}

fn builtins() -> impl Iterator<Item = ResourceDefinition> {
    BUILTINS.iter().map(|b| ResourceDefinition {
        group: b.group.into(),
        version: b.version.into(),
        kind: b.kind.into(),
        plural: b.plural.into(),
        singular: b.kind.to_lowercase(),
        short_names: b.short.iter().map(|s| s.to_string()).collect(),
        categories: match b.plural {
            "pods" | "services" | "deployments" | "replicasets" | "statefulsets" | "daemonsets"
            | "jobs" | "cronjobs" => vec!["all".into()],
            _ => Vec::new(),
        },
        namespaced: b.namespaced,
        status_subresource: b.status,
        tracks_generation: b.generation,
        delete_returns_object: b.plural == "pods",
        selectable_fields: builtin_fields(b.group, b.plural),
        name_rule: match b.plural {
            "namespaces" => NameRule::Label,
            "services" => NameRule::Dns1035Label,
            // RBAC names only need to be path segments (`system:discovery`).
            "events" | "clusterroles" | "clusterrolebindings" | "roles" | "rolebindings" => {
                NameRule::PathSegment
            }
            _ => NameRule::Subdomain,
        },
        strategic_merge: true,
        // The kinds serving fewer verbs say so in their strategies (`crate::kinds`).
        verbs: Vec::new(),
        printer_columns: Vec::new(),
        scale_subresource: matches!(b.plural, "deployments" | "replicasets" | "statefulsets")
            .then(ScaleSubresource::builtin),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_include_every_kind_the_issue_lists() {
        let registry = Registry::with_builtins();
        registry.check_invariants();
        for (group, plural) in [
            ("", "namespaces"),
            ("", "configmaps"),
            ("", "secrets"),
            ("", "pods"),
            ("", "services"),
            ("", "nodes"),
            ("", "events"),
            ("events.k8s.io", "events"),
            ("apps", "deployments"),
            ("apps", "replicasets"),
            ("apps", "statefulsets"),
            ("apps", "controllerrevisions"),
            ("", "persistentvolumeclaims"),
            ("apps", "daemonsets"),
            ("batch", "jobs"),
            ("batch", "cronjobs"),
            ("coordination.k8s.io", "leases"),
            ("apiextensions.k8s.io", "customresourcedefinitions"),
        ] {
            assert!(
                registry.get(group, "v1", plural).is_some(),
                "{group}/{plural}"
            );
        }
    }

    #[test]
    fn remove_forgets_the_resource() {
        let mut registry = Registry::with_builtins();
        let key = ResourceKey::new("", "v1", "configmaps");
        assert!(registry.remove(&key));
        assert!(registry.get("", "v1", "configmaps").is_none());
        registry.check_invariants();
    }
}
