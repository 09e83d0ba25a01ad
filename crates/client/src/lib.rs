//! kubegen-client: the REST client every other kubegen crate talks to the API server through.
//!
//! It is the Rust counterpart of client-go's `rest` package (a client that sends typed requests
//! and decodes responses) and of `tools/clientcmd` (kubeconfig loading), built on hyper 1,
//! hyper-util, hyper-rustls (ring) and tokio, with kube-core and k8s-openapi as vocabulary.
//!
//! | client-go                                   | here                                   | file                         |
//! |---------------------------------------------|----------------------------------------|------------------------------|
//! | `clientcmd.BuildConfigFromFlags`, loading rules | [`Config::load`], [`LoadOptions`]  | `config/mod.rs`              |
//! | `clientcmd/api.Config`, `loader.go` merge   | [`Kubeconfig`]                         | `config/kubeconfig.rs`       |
//! | `plugin/pkg/client/auth/exec`               | [`ExecConfig`] (run on demand)         | `config/kubeconfig.rs`, `config/exec.rs` |
//! | `rest.InClusterConfig`                      | [`InClusterPaths`]                     | `config/incluster.rs`        |
//! | `rest.RESTClient`, `rest.Request` retries   | [`Client`]                             | `client.rs`                  |
//! | `http.RoundTripper`, `transport.New`, `TLSConfigFor` | [`Transport`] (the seam), the default HTTP transport | `transport.rs`, `tls.rs` |
//! | typed clients / `gentype.Client[T]`         | [`ResourceClient`]                     | `resource_client.rs`         |
//! | `rest/watch.StreamWatcher`                  | [`WatchStream`]                        | `watch.rs`                   |
//! | `apimachinery/pkg/api/errors`               | [`Error`] predicates                   | `error.rs`                   |
//! | applyconfigurations' `Extract<Kind>`, `ExtractInto` | [`extract`] (the extraction: `kubegen-apply`) | `extract.rs` |
//! | `metav1.ListOptions` & co.                  | [`ListOptions`], [`Patch`], ...        | `options.rs`                 |
//! | `rest.Config.QPS`, `Burst`                  | [`RateLimit`] (bucket: `kubegen-flowcontrol`) | `rate_limit.rs`       |
//! | `metadata.Client` (`metadata/metadata.go`)  | [`ResourceClient::metadata_namespaced`] & co. over [`PartialObjectMeta`] | `metadata.rs` |
//! | `Deployments(ns).GetScale`/`UpdateScale`, `scale.ScalesGetter` (`Get`, `Update`, `Patch`) | [`ResourceClient::get_scale`], [`ResourceClient::update_scale`], [`ResourceClient::patch_scale`] | `scale.rs` |
//! | `dynamic.Interface`, `metadata.Client.Resource(gvr)` | [`ResourceClient::dynamic`], [`ResourceClient::dynamic_metadata`] | `dynamic.rs` |
//! | `discovery.ServerPreferredResources`        | [`discover`], [`ServerResources::preferred`] | `dynamic.rs`, `discovery/mod.rs` |
//! | `discovery.DiscoveryClient` (aggregated + classic) | [`discovery::server_resources`]  | `discovery/mod.rs`           |
//! | `discovery/cached/memory`, `discovery/cached/disk` | [`CachedDiscovery`], [`CacheOptions`] | `discovery/cache.rs`     |
//! | `meta.RESTMapper`, `restmapper.DeferredDiscoveryRESTMapper` | [`RestMapper`], [`RestMapping`] | `discovery/rest_mapper.rs` |
//! | `tools/metrics`, `rest_client_*` families   | [`ClientMetrics`]                      | `metrics.rs`                 |
//! | `CoreV1().Pods(ns).GetLogs(name, opts)`, `PodLogOptions` | [`Client::pod_logs`], [`Client::pod_log_stream`], [`LogOptions`] | `pod_logs.rs` |
//! | `tools/remotecommand` (`NewWebSocketExecutor`, `StreamOptions`), `kubectl exec`/`attach` | [`Client::exec`], [`Client::attach`], [`RemoteProcess`] | `remote_command.rs`, `websocket_exec.rs`, `channel.rs`, `websocket.rs`, `exec_pipes.rs` |
//! | `remotecommand.NewFallbackExecutor`, `NewSPDYExecutor` (`v1.go`..`v4.go`) | the same calls, falling back to SPDY | `fallback.rs`, `spdy_exec.rs`, `spdy_upgrade.rs`, `spdy.rs` |
//! | `tools/portforward` (`PortForwarder`, `parsePorts`), `kubectl port-forward` | [`Client::port_forward`], [`Client::forward_local_ports`], [`PortMapping`] | `port_forward.rs`, `spdy_forward.rs`, `spdy.rs` |
//! | `github.com/moby/spdystream/spdy` (SPDY/3.1 frames, zlib header blocks) | [`spdy`] (public: `kubegen-nodesim`'s kubelet serves SPDY with it) | `spdy.rs` |
//!
//! # Where it sits
//! Generated typed clients (`kubegen-clientset`) wrap [`ResourceClient`]; informers list and
//! watch through it (via `kubegen-cache`'s `ListWatch`); leader election updates Leases with it.
//!
//! # Differences from client-go
//! - Lists are decoded while they stream in, item by item, instead of buffering the body
//!   (`list_decoder.rs`).
//! - Watch `timeoutSeconds` has no client-side cap (kube-core caps it below 295 s).
//! - No client-side rate limit unless asked for ([`Config::rate_limit`]).
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `dynamic`, `metadata`, `pod_logs`, `port_forward`, `remote_command`, `scale`
//! - `spdy_exec`, `spdy_forward`, `websocket_exec`
//! - `spdy_upgrade`, `websocket`
//! - `discovery`, `resource_client`
//! - `client`
//! - `transport`
//! - `config`, `auth`
//! - `representation`, `watch`, `protobuf`
//! - `channel`, `exec_pipes`, `extract`, `fallback`, `list_decoder`, `rate_limit`, `request`, `secret_token`, `spdy`, `tls`, `wire_object`
//! - `body`, `error`, `metrics`, `options`

// Tests may unwrap: a panic is exactly how a test reports failure.
#![cfg_attr(test, allow(clippy::unwrap_used))]

mod auth;
mod body;
mod channel;
mod client;
pub mod config;
pub mod discovery;
mod dynamic;
mod error;
mod exec_pipes;
#[cfg(test)]
mod exec_test_peer;
mod extract;
mod fallback;
mod list_decoder;
mod metadata;
mod metrics;
mod options;
mod pod_logs;
mod port_forward;
mod protobuf;
mod rate_limit;
mod remote_command;
mod representation;
mod request;
mod resource_client;
mod scale;
mod secret_token;
pub mod spdy;
mod spdy_exec;
mod spdy_forward;
mod spdy_upgrade;
mod tls;
mod transport;
mod watch;
mod websocket;
mod websocket_exec;
mod wire_object;

pub use body::{Body, BoxError};
pub use channel::TerminalSize;
pub use client::Client;
pub use config::incluster::InClusterPaths;
pub use config::kubeconfig::{ExecConfig, ExecEnvVar, Kubeconfig};
pub use config::{Config, LoadOptions};
pub use discovery::ServerResources;
pub use discovery::cache::{CacheOptions, CachedDiscovery};
pub use discovery::rest_mapper::{RestMapper, RestMapping};
pub use dynamic::{Discovery, ServedResource, discover};
pub use error::{Error, Result};
pub use extract::extract;
pub use metrics::{ClientMetrics, NO_RESPONSE_CODE};
pub use options::{
    ApplyOptions, CreateOptions, DeleteOptions, GetOptions, ListOptions, Patch, PatchOptions,
    PropagationPolicy, ResourceVersionMatch, UpdateOptions, WriteOptions,
};
pub use pod_logs::{LogOptions, LogStream, LogStreamSelector};
pub use port_forward::{ForwardedAddress, LOCALHOST, LocalForwarder, PortConnection, PortMapping};
pub use protobuf::WireFormat;
pub use rate_limit::RateLimit;
pub use remote_command::{ExecOptions, ExitStatus, ProcessOutput, RemoteProcess, TerminalResizer};
pub use resource_client::{AnyObject, ApiObject, ResourceClient};
pub use transport::Transport;
pub use watch::WatchStream;
pub use wire_object::{HeadMeta, ObjectHead, WireDecoder, WireObject};

// The README's examples, compiled (and not run) as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;

pub use kube_core::discovery::ApiResource;
/// Re-exported vocabulary, so callers need not depend on kube-core directly for these.
pub use kube_core::metadata::PartialObjectMeta;
pub use kube_core::{DynamicObject, ObjectList, Status, WatchEvent};
