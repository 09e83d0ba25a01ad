//! kubegen-testserver: an in-process Kubernetes API server for tests and for the controller's
//! `--embedded` mode.
//!
//! Real Kubernetes cannot run where kubegen is developed and tested, so this crate speaks the
//! kube-apiserver wire protocol closely enough that kubegen's client, reflector, informers and
//! controller cannot tell the difference for the features they use. It is a test double: where it
//! has a behaviour, that behaviour matches the real server, including the exact shape of `Status`
//! error bodies.
//!
//! # Entry points
//! - [`TestServer::start`] binds 127.0.0.1 on an ephemeral port (HTTP or, with
//!   [`ServerOptions::tls`], HTTPS with a generated CA) and hands out [`TestServer::url`] and a
//!   ready [`TestServer::kubeconfig_yaml`].
//! - [`ApiServer::handle`] is the same server without a socket: the fake clientset plugs it into a
//!   client transport.
//! - [`TestFleet::start`] starts a hub and N members at once, with the hub's Cluster API
//!   kubeconfig Secrets for the members ([`TestFleet::install_kubeconfig_secrets`]): a fleet for
//!   multi-cluster controllers.
//! - [`Faults`] injects failures: dropped, stalled or bookmark-less watches, forced compaction
//!   (410), 429/500/503 responses, latency.
//!
//! # The request path
//! ```text
//! TestServer (listener.rs: socket, TLS, HTTP/1.1+2) ──or── ApiServer::handle (pipeline.rs)
//!  1. authenticate      bearer token → UserInfo; the audit    authn.rs, storage/tokens.rs, jwt.rs,
//!                         event starts (RequestReceived)       audit/ (its last stages when the
//!                                                              answer is written)
//!  2. authorize         RequestInfo (verb, resource…) → 403   request/requestinfo.rs, verb.rs,
//!                                                              authz.rs, rbac/
//!  3. route             path → Target or discovery/OpenAPI    request/route.rs (a kind's own
//!                         (non-resource: handlers/discovery.rs,  subresources: its strategy)
//!                         openapi/)
//!  4. scope             verb, dryRun, fieldManager, Accept    request/scope.rs, request/negotiation.rs
//!                         → one immutable Scope; 405 for a method no route serves or a verb
//!                         the kind's strategy does not serve
//!  5. faults, decode    injected failures, 413, body → JSON,  faults.rs, request/negotiation.rs,
//!                         fieldValidation                      fieldvalidation.rs, request/query.rs
//!  6. convert in        a kind served in several versions     kinds/custom_resource/edge.rs
//!                         (custom resources): writes made in    (the strategy's `edge`),
//!                         the request's version, stored in the  handlers/versioned.rs
//!                         storage version
//!  7. handler           one per verb (+ scale, reviews,       handlers/{read,watch,create,update,
//!                         TokenRequest)                         delete,scale,review,token}.rs
//!  8. admission         mutating, then validating plugins,    admission/ (NamespaceLifecycle,
//!                         policies and webhooks, outside the    admission/policy/,
//!                         lock                                  admission/webhook/
//!  9. strategy          the kind's own rules: decoding,       kinds/ (strategy, namespace, crd,
//!                         preparing, validating (a custom       custom_resource/, config_data, pod,
//!                         resource's schema and CEL in the      webhook_configuration,
//!                         request's version), after-hooks       admission_policy, policy_binding,
//!                                                                deletion, stages)
//!                         server-side apply, managedFields    apply.rs (engine: kubegen-apply),
//!                                                                patch.rs, validation.rs
//! 10. store             objects, history, resource table      storage/, registry/
//! 11. convert out,      answers in the request's version;     kinds/custom_resource/edge.rs,
//!     encode            JSON/protobuf, lists, watch frames,   encode/, table/
//!                         Tables, PartialObjectMetadata
//! bottom: Status errors (status.rs), bodies and JSON responses (body.rs), object helpers
//!         (object.rs), the HTTPS client of admission and conversion webhooks (webhook_client.rs)
//! ```
//! Admission (8) and the strategy (9) run inside the write handlers, under the storage lock, as
//! the real registry runs them inside `Create`/`Update`/`Delete`; the handlers ask a kind's
//! strategy (`kinds::strategy_for`) through its hooks and never name a kind. Handlers receive the
//! request's `Scope` (`request/scope.rs`) and, for writes, only the storage handle.
//!
//! The steps are the order a request takes, not the order of imports (the router reads
//! `registry/`, drawn at step 10): which module may import which is the `# Layers` below.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `fleet`
//! - `listener`
//! - `in_process`
//! - `pipeline`
//! - `authn`, `rbac`
//! - `handlers`
//! - `admission`, `fieldvalidation`
//! - `kinds`
//! - `apply`, `encode`
//! - `openapi`, `table`
//! - `apiserver`
//! - `faults`, `options`
//! - `request`
//! - `audit`
//! - `patch`, `storage`, `validation`
//! - `registry`
//! - `authz`, `jwt`, `object`, `tls`, `verb`, `webhook_client`
//! - `error`, `status`
//! - `body`

//!
//! # Real-server behaviour reproduced
//! - Storage: one global, monotonically increasing resourceVersion; uid, creationTimestamp,
//!   generation (bumped only when something outside metadata/status changes); optimistic
//!   concurrency (409 Conflict); `generateName`; AlreadyExists/NotFound; `/status` subresource
//!   semantics; JSON merge, JSON patch and (for built-ins) strategic merge patch; finalizers with
//!   `deletionTimestamp` (removing the last one deletes without a further MODIFIED);
//!   delete preconditions and `propagationPolicy` (`Foreground` / `Orphan` keep the object with
//!   the `foregroundDeletion` / `orphan` finalizer until the garbage collector removes it);
//!   deletecollection; namespaces that must exist (the NamespaceLifecycle admission plugin), and
//!   namespace deletion (Terminating until the namespace controller has deleted the content and
//!   called `finalize`), the namespace `finalize` subresource
//!   (everything but `status`, removal once `spec.finalizers` and `metadata.finalizers` are
//!   empty); DNS-1123 name validation (422 Invalid), of `generateName` too (cut
//!   at byte 58 like the real server, even inside a multibyte character), and the 1 MiB limit of
//!   ConfigMap and Secret data (422 Invalid).
//! - Limits: write bodies over 3 MiB get 413 (current servers' `MaxRequestBodyBytes`; 1.15 had
//!   100 MiB), JSON patches over 10000 operations 413 and over 3 MiB of `copy` 422.
//! - Bad input never panics: every request gets an answer, failures are `Status` bodies (or the
//!   plain-text `404 page not found` outside the API, e.g. under a group nothing serves);
//!   `fuzz/tests/fuzz/testserver_http.rs` throws random requests at the socket to keep it so.
//! - The `scale` subresource (`autoscaling/v1 Scale`) of Deployments, ReplicaSets, StatefulSets
//!   and CRDs declaring `subresources.scale`.
//! - `Table` responses for `kubectl get` (upstream printer columns for the built-in kinds, CRD
//!   `additionalPrinterColumns`, `includeObject`), also on watches.
//! - Lists: label and field selectors (each kind's supported fields and error wording),
//!   `limit`/`continue` with opaque tokens served from a consistent snapshot and expiring with
//!   410 after compaction, `remainingItemCount` on unfiltered pages, `resourceVersion` /
//!   `resourceVersionMatch` (`""` consistent, `"0"` any, `Exact`, `NotOlderThan`, and the 504
//!   "Too large resource version" after a configurable wait).
//! - Watches: chunked NDJSON from a resourceVersion, synthetic `ADDED` for RV unset/"0", 410 `ERROR`
//!   events beyond the bounded history, periodic and on-demand BOOKMARKs and one 2 s before
//!   `timeoutSeconds` once the resource changed, `timeoutSeconds`,
//!   streaming lists (`sendInitialEvents=true`, ending at the `k8s.io/initial-events-end` bookmark,
//!   switchable off to mimic older servers), selector transitions as ADDED/DELETED.
//! - Discovery (`/version`, `/api`, `/api/v1`, `/apis`, `/apis/<g>`, `/apis/<g>/<v>`) and CRDs:
//!   creating a CustomResourceDefinition serves its resource and marks it Established; deleting
//!   it removes the resource and its objects. A group nobody serves gets the plain-text
//!   `404 page not found`. A CRD's versions share the storage version's objects; the others
//!   are converted on every read, list, watch and write (`None`: `apiVersion` rewritten;
//!   `Webhook`: a `ConversionReview` to `clientConfig.url`, failures worded as v1.36's); a patch
//!   or apply in another version applies to the object in that version, and managedFields
//!   entries keep the version their manager wrote through (`kinds/custom_resource/managers.rs`,
//!   `handlers/versioned.rs`); a write is validated with the schema of the version it names
//!   (`kinds/stages.rs`), and `/scale` uses that version's replica paths.
//! - `dryRun=All` on every write: the response is computed, nothing is stored.
//! - OpenAPI: `/openapi/v2` and `/openapi/v3` (index with hashes, per group-version documents,
//!   ETag/`?hash=` caching), in JSON and in gnostic's protobuf, for the built-in kinds (the real
//!   v1.36 server's own documents, shipped as data) and every installed CRD; server-side
//!   `fieldValidation` (Strict/Warn/Ignore) against the same schemas, so `kubectl apply`
//!   validates and `kubectl explain` works.
//! - Server-side apply (`application/apply-patch+yaml` with `fieldManager`, `force`, `dryRun`) and
//!   `metadata.managedFields` on every write, with structured-merge-diff's semantics driven by
//!   the same OpenAPI schemas: ownership per manager and operation, conflicts (409) worded as
//!   v1.36, removal of fields a manager stops applying, associative/set/atomic lists, granular
//!   and atomic maps, apply-create (the `kubegen-apply` crate, with `apply.rs` its adapter).
//! - Authentication and authorization, opt-in ([`ServerOptions::tokens`],
//!   [`ServerOptions::bearer_token`], [`ServerOptions::rbac`]; by default everybody is an
//!   allow-all administrator): static tokens and ServiceAccount tokens from the TokenRequest API,
//!   signed JWTs with v1.36's claims checked as v1.36 checks them (`authn.rs`,
//!   `storage/tokens.rs`, `jwt.rs`; `TokenReview` and the issuer's OpenID discovery in
//!   `handlers/token_review.rs`, `handlers/oidc.rs`), 401 for a missing or unknown token; every request authorized once
//!   before routing, with the real server's request attributes and 403 wording
//!   (`request/requestinfo.rs`); RBAC
//!   over the served `rbac.authorization.k8s.io/v1` objects with the bootstrap roles a real server
//!   creates (`rbac/`). Access reviews (`SelfSubjectAccessReview` / `SelfSubjectRulesReview`)
//!   answer for the requesting user from the same [`Authorizer`], for `kubectl auth can-i`;
//!   `SelfSubjectReview` names the requesting user, for `kubectl auth whoami`.
//! - Admission webhooks: `admissionregistration.k8s.io/v1` Mutating/ValidatingWebhookConfigurations
//!   (v1.36 serves no v1beta1) are called over HTTPS as v1.36 calls them — rules, selectors,
//!   failurePolicy, timeouts, JSONPatch, reinvocation, warnings, and the real wording of
//!   denials and failures (`admission/webhook/`, `docs/webhook-reference.md`), and CEL
//!   `matchConditions`; for a custom resource, the object in the version the webhook's rules
//!   matched (`matchPolicy: Equivalent` included), as `docs/crd-conversion-reference.md` shows.
//! - Admission policies: `admissionregistration.k8s.io/v1` Validating/MutatingAdmissionPolicies
//!   and their bindings, stored with v1.36's defaults and checks and enforced around the
//!   webhooks of their phase — matching, parameters, variables, match conditions, Deny/Warn,
//!   message expressions, failure policies, JSONPatch and ApplyConfiguration mutations, worded
//!   as v1.36 (`admission/policy/`, differences in the README).
//! - Custom resources under their CRD's structural schema (`kinds/custom_resource/`, through
//!   `kubegen-apiextensions`): unknown fields pruned, defaults filled in (also into objects stored
//!   before a default was added), OpenAPI value validation, list-type invariants and
//!   `x-kubernetes-validations` CEL rules (transition rules, ratcheting) on every write path,
//!   with v1.36's 422 messages and causes.
//! - An audit log ([`ServerOptions::audit_policy`], [`AuditPolicy`], `audit/`): kube-apiserver's
//!   `audit.k8s.io/v1` policies and events, stage by stage, to a file, stdout or memory
//!   ([`ApiServer::audit_events`]), with the authorization and admission policy annotations; an
//!   `Audit-Id` header on every response.
//! - TLS with HTTP/1.1 and HTTP/2 (ALPN), clean shutdown.
//! - Content negotiation: request bodies in JSON, YAML and, for built-in kinds, protobuf (decoded
//!   by `kubegen-codec`, so kubectl's `create` works); 415 for other body types; `Accept` parsed
//!   with q-values; answers (objects, lists, `Status` errors, watch streams) in protobuf for
//!   built-in kinds when the chosen range asks for it, as kubectl and client-go do, JSON otherwise
//!   and for custom resources and Tables; 406 when no media range can be written (shapes in
//!   `request/negotiation.rs`, writing in `encode/`).
//! - A controller-manager beside the server ([`ServerOptions::controller_manager`], on by default
//!   for a [`TestServer`], never for a socket-less [`ApiServer`]): `kubegen-controller-manager`
//!   runs kube-controller-manager's namespace, garbage-collector, ServiceAccount, token,
//!   Deployment and ReplicaSet controllers against the server as a client, on kubegen's own
//!   informers, so namespaces finish deleting, owners collect their dependents and Deployments
//!   roll out as on a real cluster. Switched off, the server answers as a kube-apiserver without
//!   kube-controller-manager.
//! - Simulated Nodes beside the server ([`ServerOptions::simulated_nodes`], off for a library
//!   [`TestServer`], on in the binary and in `kubegen-embedded`): `kubegen-nodesim` registers
//!   Nodes that heartbeat, binds Pods through `pods/binding` (served as v1.36 serves it:
//!   `handlers/binding.rs`) and runs them, so Deployments become Available. Without it Pods stay
//!   Pending, as on a cluster without nodes.
//! - A Pod's streams: `pods/log` (streamed, `follow`), `pods/exec`, `pods/attach` and
//!   `pods/portforward` are checked as v1.36 checks them (PodLogOptions, the container, a Pod
//!   without a Node, `create` on the upgrade subresources) and proxied to the kubelet the Pod's
//!   Node advertises (`handlers/pod_connect.rs`, `handlers/kubelet_proxy.rs`): the log streamed,
//!   an upgrade passed through and spliced. With simulated Nodes that is `kubegen-nodesim`'s
//!   kubelet, which runs built-in commands only.
//! - Methods: the verb of a request follows kube-apiserver's `RequestInfoFactory` (HEAD counts as
//!   GET for authorization); a method no route serves (`OPTIONS`, `HEAD`, `PUT` on a collection,
//!   `DELETE` on `/status`…) gets the router's generic 405.
//!
//! # Deliberately not reproduced
//! No admission plugin beyond NamespaceLifecycle (namespaces must exist, terminating ones refuse
//! new content, system namespaces cannot be deleted), TaintNodesByCondition (a new Node is
//! tainted not-ready), the admission policies and the admission
//! webhooks (which are not called for deletecollection, `scale`, `finalize` or TokenRequests),
//! no anonymous
//! requests, no ClusterRole
//! aggregation or RBAC escalation checks, no `ancient-changes` compaction of managedFields, no
//! pruning of unknown fields
//! (they are reported, see `fieldValidation`, but stored), no defaulting of built-in specs
//! (Table cells and Scales read absent fields with the real defaults, e.g. one replica), no
//! graceful pod deletion, no version conversion (each
//! served version and the two Event APIs have separate storage), no aggregated discovery,
//! YAML responses, and no
//! watch-cache pagination quirks (a `limit` is always honoured). Watch `ERROR` events stay plain
//! `Status` objects in Table form. A body without `apiVersion`/`kind` is accepted and completed
//! from the URL where the real server would reject it. The namespace strategy does not yet keep `spec.finalizers` on a plain update
//! or add `kubernetes` to a client's own on create. Discovery and OpenAPI paths answer GET only
//! (the generic 405 otherwise), where v1.36 answers some of them (`/apis`, `/apis/<group>`,
//! `/openapi/v2`) whatever the method. A watch from a resourceVersion newer than
//! the server's waits for it instead of failing. Request bodies and patched objects nest at most
//! 127 levels deep (400 / 422 beyond), where the real server accepts up to 10000. An unknown path outside
//! `/api` and `/apis` gets the plain-text 404 where the real server lists its root paths.
//! A Pod's exec, attach and port-forward WebSockets go to the kubelet unchanged (as v1.36 does for
//! a Node declaring `ExtendWebSocketsToKubelet`), never translated to SPDY; the Node's address is
//! taken InternalIP first (kubeadm's `--kubelet-preferred-address-types`, where kube-apiserver's
//! own default tries Hostname first).

mod admission;
mod apiserver;
mod apply;
mod audit;
mod authn;
mod authz;
mod body;
mod encode;
mod error;
mod faults;
mod fieldvalidation;
mod fleet;
mod handlers;
mod in_process;
mod jwt;
mod kinds;
mod listener;
mod object;
mod openapi;
mod options;
mod patch;
mod pipeline;
mod rbac;
mod registry;
mod request;
mod status;
mod storage;
mod table;
mod tls;
mod validation;
mod verb;
mod webhook_client;

pub use apiserver::ApiServer;
pub use audit::AuditPolicy;
pub use authz::{
    AllowAll, Attributes, Authorizer, Decision, NonResourceRule, ResourceRule, Rules, UserInfo,
};
pub use body::BoxBody;
pub use error::Error;
pub use faults::{Failure, Faults, RequestMatch};
pub use fleet::{TestFleet, kubeconfig_secret};
pub use listener::TestServer;
pub use options::ServerOptions;
pub use registry::printer_column::PrinterColumn;
pub use registry::scale::ScaleSubresource;
pub use registry::{NameRule, ResourceDefinition};
pub use verb::Verb;
