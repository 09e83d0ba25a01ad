//! The MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins (apiserver
//! `pkg/admission/plugin/webhook/{mutating,validating}/dispatcher.go`): the last mutating and the
//! last validating step of every write, calling the webhooks the stored configurations name.
//!
//! Unlike the built-in plugins these are `async` and run outside the storage lock (a webhook may
//! well call back into this server): the write handlers take [`Webhooks::load`] while they hold
//! the lock, release it, call [`Webhooks::mutate`] on the incoming object and, once the object
//! to store is computed, [`Webhooks::validate`] on it, then take the lock again to store.
//!
//! # Behaviour reproduced (checked against v1.36, see `docs/webhook-reference.md`)
//! - Mutating webhooks in configuration-name order, each seeing the previous one's JSONPatch;
//!   `reinvocationPolicy: IfNeeded` webhooks run once more when a later one changed the object;
//!   validating webhooks see the object as it will be stored.
//! - The review: `admission.k8s.io/v1` when the webhook lists it first among
//!   `admissionReviewVersions` it and the server share, else `v1beta1`; uid, kind, resource,
//!   subResource, requestKind/Resource, name, namespace, operation, userInfo, object, oldObject,
//!   dryRun, options. The URL gets `?timeout=<timeoutSeconds>s`.
//! - Denials: the webhook's `status.code` (400 when unset) and `status.reason`, the message
//!   `admission webhook "<name>" denied the request: <message>` (or `... without explanation`).
//! - Failures (timeouts, refused connections, TLS, non-200, unreadable answers, a wrong uid):
//!   500 `InternalError` `failed calling webhook "<name>": ...` under `failurePolicy: Fail`,
//!   ignored under `Ignore`. Warnings become `Warning` headers.
//! - `clientConfig.service`: there is no cluster network here; a missing Service is
//!   `service "<name>" not found` as on the real server, an existing one is dialed as the real
//!   server would dial it without cluster DNS (`lookup <name>.<ns>.svc: no such host`).
//!
//! - `matchConditions`: a webhook is called only when all hold; one that fails to evaluate is
//!   403 `Forbidden` `<resource> "<name>" is forbidden: expression '<e>' resulted in error: <why>`
//!   under `failurePolicy: Fail`, a webhook not called under `Ignore`.
//! - Versions (a custom resource served in several, `docs/crd-conversion-reference.md`): a
//!   webhook gets `object` and `oldObject` in the version its rules matched ([`config`]: the
//!   request's, else under `matchPolicy: Equivalent` another served version), `kind` and
//!   `resource` in that version and `requestKind`/`requestResource` in the request's; a
//!   mutating webhook's JSONPatch applies to the object in the version it was sent in, which is
//!   converted back. A conversion that fails is 500 `InternalError` with the conversion's
//!   message, whatever the `failurePolicy`.
//! - The audit log (`crate::audit`): a webhook's `auditAnnotations` as `<webhook>/<key>`; each
//!   mutating webhook called as `mutation.webhook.admission.k8s.io/round_<r>_index_<i>` (its
//!   place among all mutating webhooks) and its patch, from level `Request`, as
//!   `patch.webhook.admission.k8s.io/round_<r>_index_<i>`; a webhook whose failure was ignored
//!   as `failed-open.{mutation,validating}.webhook.admission.k8s.io/round_<r>_index_<i>` (a
//!   validating webhook's place among those called).
//!
//! # Differences
//! Validating webhooks are called one after the other (the real server calls them in parallel:
//! the first denial in configuration order wins here, any one there). Objects are converted for
//! a webhook when it is reached, where the real server converts for all of a phase's webhooks
//! first (a failed conversion there also spares the webhooks before it). Go's JSON and JSONPatch
//! error texts are Rust's.

pub(crate) mod config;
mod review;

use std::time::Duration;

use serde_json::{Map, Value};

pub(crate) use config::Phase;

use crate::admission::plugin::Attributes;
use crate::admission::policy::{Inputs, Policies};
use crate::audit::{Level, RequestAudit, go_json};
use crate::kinds::custom_resource::conversion::CrdVersions;
use crate::status::ApiError;
use config::Webhook;
use review::{Answer, Review};

/// A mutating webhook's call in the audit event (apiserver `MutationAuditAnnotation`).
#[derive(serde::Serialize)]
struct MutationRecord<'a> {
    configuration: &'a str,
    webhook: &'a str,
    mutated: bool,
}

/// A mutating webhook's patch in the audit event, from level `Request` (apiserver
/// `PatchAuditAnnotation`).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct PatchRecord<'a> {
    configuration: &'a str,
    webhook: &'a str,
    patch: &'a json_patch::Patch,
    patch_type: &'a str,
}

/// The webhooks one write goes to, and what they said.
pub(crate) struct Webhooks {
    mutating: Vec<Webhook>,
    validating: Vec<Webhook>,
    review: Review,
    /// The CRD's versions, for a custom resource: webhooks of other versions get the objects
    /// converted.
    versions: Option<CrdVersions>,
    /// The version the handlers pass the objects in.
    version: String,
    /// The old object converted to the versions asked so far.
    olds: Vec<(String, Option<Value>)>,
    /// Services that exist, by `namespace/name` (for `clientConfig.service`).
    services: Vec<String>,
    /// Warnings the webhooks and policies returned, in order.
    pub(crate) warnings: Vec<String>,
    /// The admission policies that apply to the write (`crate::admission::policy`), run just
    /// before the webhooks of their phase.
    policies: Policies,
    /// The resource written, for the 403 of a match condition that fails (`configmaps`).
    group: String,
    resource: String,
    /// The request's audit event: webhooks' `auditAnnotations` and the mutating webhooks'
    /// `mutation.webhook.admission.k8s.io/` and `patch.webhook.admission.k8s.io/` records.
    audit: RequestAudit,
    /// Whether the last [`Webhooks::call`] sent a review (its selectors and conditions matched).
    invoked: bool,
    /// Whether the last [`Webhooks::call`] failed and was ignored (`failurePolicy: Ignore`).
    failed_open: bool,
}

impl Webhooks {
    /// The webhooks whose rules and namespace selector match this write (`object` is the
    /// incoming object; `options` the request's Create/Update/DeleteOptions).
    pub(crate) fn load(
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        options: Value,
    ) -> Webhooks {
        let state = attributes.state;
        let versions = CrdVersions::of(state, &attributes.scope.def);
        let served = versions.as_ref().map_or(&[][..], |v| &v.served);
        let mutating = config::matching((Phase::Mutating, served), attributes, object);
        let validating = config::matching((Phase::Validating, served), attributes, object);
        let policies = Policies::load(attributes, served, object);
        let services = mutating
            .iter()
            .chain(&validating)
            .filter_map(|w| w.client_config.service.as_ref())
            .filter(|s| {
                let key =
                    crate::storage::objects::ObjectKey::from((s.namespace.clone(), s.name.clone()));
                state
                    .store
                    .get(
                        &crate::registry::ResourceKey::new("", "v1", "services"),
                        &key,
                    )
                    .is_some()
            })
            .map(|s| format!("{}/{}", s.namespace, s.name))
            .collect();
        Webhooks {
            mutating,
            validating,
            review: Review::new(attributes, options),
            versions,
            version: attributes.scope.def.version.clone(),
            olds: Vec::new(),
            services,
            warnings: Vec::new(),
            policies,
            group: attributes.scope.def.group.clone(),
            resource: attributes.scope.def.plural.clone(),
            audit: attributes.scope.audit.clone(),
            invoked: false,
            failed_open: false,
        }
    }

    /// Whether any validating webhook or policy may be called (so the handler must release
    /// its lock and run the validating phase).
    pub(crate) fn has_validating(&self) -> bool {
        !self.validating.is_empty() || self.policies.has_validating()
    }

    /// The name chosen for a created object (after `generateName`), for the validating review.
    pub(crate) fn set_name(&mut self, name: &str) {
        self.review.name = name.to_string();
        self.policies.set_name(name);
    }

    /// The `request` a policy sees, about `object` and the old object.
    fn policy_request(&self, object: Option<&Value>) -> Value {
        self.review
            .request(&self.version, (object, self.review.old.as_ref()))
    }

    /// Runs the mutating policies, then the mutating webhooks on `object` (None on delete),
    /// applying their patches, then once more the `IfNeeded` policies whose output the
    /// webhooks changed.
    ///
    /// # Errors
    /// A denial, or a failure of a `failurePolicy: Fail` webhook or policy.
    pub(crate) async fn mutate(
        &mut self,
        mut object: Option<&mut Map<String, Value>>,
    ) -> Result<(), ApiError> {
        // The policies' request copies the object: built only when a mutating policy matched.
        let ran = match object.as_deref_mut() {
            Some(object) if self.policies.has_mutating() => {
                let request = self.policy_request(Some(&Value::Object(object.clone())));
                let inputs = Inputs {
                    object: None,
                    old: self.review.old.as_ref(),
                    request: &request,
                };
                self.policies.mutate(object, &inputs)?
            }
            _ => Vec::new(),
        };
        self.mutate_by_webhooks(object.as_deref_mut()).await?;
        if let Some(object) = object
            && !ran.is_empty()
        {
            let request = self.policy_request(Some(&Value::Object(object.clone())));
            let inputs = Inputs {
                object: None,
                old: self.review.old.as_ref(),
                request: &request,
            };
            self.policies.reinvoke(ran, object, &inputs)?;
        }
        Ok(())
    }

    /// The mutating webhooks' part of [`Webhooks::mutate`], with their reinvocation.
    async fn mutate_by_webhooks(
        &mut self,
        mut object: Option<&mut Map<String, Value>>,
    ) -> Result<(), ApiError> {
        if self.mutating.is_empty() {
            return Ok(());
        }
        let hooks = std::mem::take(&mut self.mutating);
        let mut after_each = Vec::with_capacity(hooks.len());
        for hook in &hooks {
            self.call_mutating((hook, 0), object.as_deref_mut()).await?;
            after_each.push(object.as_deref().cloned());
        }
        let last = object.as_deref().cloned();
        for (hook, after) in hooks.iter().zip(after_each) {
            let reinvoke = hook.reinvocation_policy.as_deref() == Some("IfNeeded");
            if reinvoke && after != last {
                self.call_mutating((hook, 1), object.as_deref_mut()).await?;
            }
        }
        self.mutating = hooks;
        Ok(())
    }

    /// Calls one mutating webhook in `round` (0, or 1 when reinvoked) with the object in its
    /// version and applies its patch there; an invoked webhook is recorded in the audit event
    /// as the mutating dispatcher records it.
    async fn call_mutating(
        &mut self,
        (hook, round): (&Webhook, usize),
        object: Option<&mut Map<String, Value>>,
    ) -> Result<(), ApiError> {
        let value = object.as_deref().map(|o| Value::Object(o.clone()));
        let value = self.in_version(value, &hook.version).await?;
        let called = self.call(hook, value.as_ref()).await;
        let mut mutated = false;
        let answer = match called {
            Ok(Some(answer)) => Some(answer),
            Ok(None) => None,
            Err(error) => {
                self.record_mutation(hook, round, false);
                return Err(error);
            }
        };
        if let Some(answer) = answer
            && let (Some(patch), Some(object), Some(mut patched)) = (answer.patch, object, value)
        {
            let before = patched.clone();
            json_patch::patch(&mut patched, &patch)
                .map_err(|e| ApiError::internal(e.to_string()))?;
            mutated = patched != before;
            let key = format!(
                "patch.webhook.admission.k8s.io/round_{round}_index_{}",
                hook.index
            );
            let record = PatchRecord {
                configuration: &hook.configuration,
                webhook: &hook.name,
                patch: &patch,
                patch_type: "JSONPatch",
            };
            self.audit
                .annotate_from(Level::Request, &key, &go_json(&record));
            let version = self.version.clone();
            if let Some(Value::Object(map)) = self.in_version(Some(patched), &version).await? {
                *object = map;
            }
        }
        self.record_mutation(hook, round, mutated);
        Ok(())
    }

    /// `mutation.webhook.admission.k8s.io/round_<r>_index_<i>`, for a webhook that was called,
    /// and `failed-open.mutation.webhook.admission.k8s.io/...` when its failure was ignored.
    fn record_mutation(&self, hook: &Webhook, round: usize, mutated: bool) {
        if !self.invoked {
            return;
        }
        if self.failed_open {
            let key = format!(
                "failed-open.mutation.webhook.admission.k8s.io/round_{round}_index_{}",
                hook.index
            );
            self.audit.annotate(&key, &hook.name);
        }
        let key = format!(
            "mutation.webhook.admission.k8s.io/round_{round}_index_{}",
            hook.index
        );
        let record = MutationRecord {
            configuration: &hook.configuration,
            webhook: &hook.name,
            mutated,
        };
        self.audit.annotate(&key, &go_json(&record));
    }

    /// Runs the validating webhooks on the object about to be stored (None on delete).
    ///
    /// # Errors
    /// A denial, or a failure of a `failurePolicy: Fail` webhook.
    pub(crate) async fn validate(&mut self, object: Option<&Value>) -> Result<(), ApiError> {
        if self.policies.has_validating() {
            self.validate_by_policies(object).await?;
        }
        // The object converted once per version the webhooks matched in.
        let mut views: Vec<(String, Option<Value>)> = Vec::new();
        // Its place among the webhooks called, for a failed-open record in the audit event.
        let mut called = 0;
        for hook in self.validating.clone() {
            if !views.iter().any(|(v, _)| *v == hook.version) {
                let view = self.in_version(object.cloned(), &hook.version).await?;
                views.push((hook.version.clone(), view));
            }
            let view = views.iter().find(|(v, _)| *v == hook.version);
            self.call(&hook, view.and_then(|(_, view)| view.as_ref()))
                .await?;
            if self.failed_open {
                let key = format!(
                    "failed-open.validating.webhook.admission.k8s.io/round_0_index_{called}"
                );
                self.audit.annotate(&key, &hook.name);
            }
            called += usize::from(self.invoked);
        }
        Ok(())
    }

    /// Runs the validating policies, each on the objects in the version it matched in.
    ///
    /// # Errors
    /// A denial, or a conversion that failed (500).
    async fn validate_by_policies(&mut self, object: Option<&Value>) -> Result<(), ApiError> {
        let mut owned = Vec::new();
        for version in self.policies.validating_versions() {
            let object = self.in_version(object.cloned(), &version).await?;
            let old = self.old_in(&version).await?;
            let request = self
                .review
                .request(&version, (object.as_ref(), old.as_ref()));
            owned.push((version, object, old, request));
        }
        let views: Vec<(String, Inputs<'_>)> = owned
            .iter()
            .map(|(version, object, old, request)| {
                let inputs = Inputs {
                    object: object.as_ref(),
                    old: old.as_ref(),
                    request,
                };
                (version.clone(), inputs)
            })
            .collect();
        self.policies.validate(&views, &mut self.warnings)
    }

    /// `object` (in the version the handlers pass it in) in `version`.
    ///
    /// # Errors
    /// 500 `InternalError` with the conversion's failure, as v1.36 answers it.
    async fn in_version(
        &self,
        object: Option<Value>,
        version: &str,
    ) -> Result<Option<Value>, ApiError> {
        match (object, &self.versions) {
            (Some(object), Some(versions)) => {
                let converted = versions.convert_one(object, version).await;
                converted
                    .map(Some)
                    .map_err(|e| ApiError::internal(e.message))
            }
            (object, _) => Ok(object),
        }
    }

    /// The old object in `version`, converted once.
    async fn old_in(&mut self, version: &str) -> Result<Option<Value>, ApiError> {
        if let Some((_, old)) = self.olds.iter().find(|(v, _)| v == version) {
            return Ok(old.clone());
        }
        let old = self.in_version(self.review.old.clone(), version).await?;
        self.olds.push((version.to_owned(), old.clone()));
        Ok(old)
    }

    /// Calls one webhook with `object` (in its version) if its object selector matches:
    /// `Ok(None)` when it was skipped or failed under `Ignore`.
    async fn call(
        &mut self,
        hook: &Webhook,
        object: Option<&Value>,
    ) -> Result<Option<Answer>, ApiError> {
        self.invoked = false;
        self.failed_open = false;
        if !hook.selects_object(object, self.review.old.as_ref()) {
            return Ok(None);
        }
        let old = self.old_in(&hook.version).await?;
        let objects = (object, old.as_ref());
        if !self.conditions_hold(hook, objects)? {
            return Ok(None);
        }
        self.invoked = true;
        let outcome = self.exchange(hook, objects).await;
        match outcome {
            Ok(answer) => {
                for (key, value) in &answer.audit_annotations {
                    self.audit.annotate(&format!("{}/{key}", hook.name), value);
                }
                self.warnings.extend(answer.warnings.iter().cloned());
                if let Some(denial) = answer.denial {
                    return Err(denial);
                }
                Ok(Some(answer))
            }
            Err(_) if hook.failure_policy.as_deref() == Some("Ignore") => {
                self.failed_open = true;
                Ok(None)
            }
            Err(why) => Err(ApiError::internal(format!(
                "failed calling webhook \"{}\": {why}",
                hook.name
            ))),
        }
    }

    /// Whether `hook`'s match conditions hold (an evaluation error under `Ignore` counts as not).
    ///
    /// # Errors
    /// 403 Forbidden for an evaluation error under `failurePolicy: Fail`.
    fn conditions_hold(
        &self,
        hook: &Webhook,
        objects: (Option<&Value>, Option<&Value>),
    ) -> Result<bool, ApiError> {
        let request = self.review.request(&hook.version, objects);
        let null = Value::Null;
        let variables = [
            ("object", objects.0.unwrap_or(&null)),
            ("oldObject", objects.1.unwrap_or(&null)),
            ("request", &request),
        ];
        match hook.conditions_hold(&variables) {
            Ok(holds) => Ok(holds),
            Err(_) if hook.failure_policy.as_deref() == Some("Ignore") => Ok(false),
            Err(why) => {
                let what = crate::status::Qualified {
                    group: &self.group,
                    resource: &self.resource,
                };
                Err(ApiError::forbidden(what, &self.review.name, &why))
            }
        }
    }

    /// One review sent and its answer read, within the webhook's timeout.
    async fn exchange(
        &self,
        hook: &Webhook,
        objects: (Option<&Value>, Option<&Value>),
    ) -> Result<Answer, String> {
        let seconds = hook.timeout_seconds.unwrap_or(10);
        let base = match (&hook.client_config.url, &hook.client_config.service) {
            (Some(url), _) => url.clone(),
            (None, Some(s)) => {
                let path = s.path.as_deref().unwrap_or("");
                format!(
                    "https://{}.{}.svc:{}{path}",
                    s.name,
                    s.namespace,
                    s.port.unwrap_or(443)
                )
            }
            (None, None) => return Err("failed to call webhook: no clientConfig".into()),
        };
        let separator = if base.contains('?') { '&' } else { '?' };
        let url = format!("{base}{separator}timeout={seconds}s");
        if let Some(s) = &hook.client_config.service {
            let why = if self
                .services
                .contains(&format!("{}/{}", s.namespace, s.name))
            {
                format!(
                    "dial tcp: lookup {}.{}.svc: no such host",
                    s.name, s.namespace
                )
            } else {
                format!("service \"{}\" not found", s.name)
            };
            return Err(format!("failed to call webhook: Post \"{url}\": {why}"));
        }
        let (uid, body) = self.review.body(hook, objects);
        let ca = hook
            .client_config
            .ca_bundle
            .as_deref()
            .map(review::decode_ca);
        let call = crate::webhook_client::post(&url, ca.as_deref(), body);
        let bytes = match tokio::time::timeout(Duration::from_secs(seconds), call).await {
            Ok(Ok(bytes)) => bytes,
            Ok(Err(why)) => return Err(format!("failed to call webhook: {why}")),
            Err(_) => {
                return Err(format!(
                    "failed to call webhook: Post \"{url}\": context deadline exceeded"
                ));
            }
        };
        review::answer(&bytes, &uid, &hook.name)
    }
}
