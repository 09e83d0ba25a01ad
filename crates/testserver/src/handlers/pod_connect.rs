//! `pods/log`, `pods/exec`, `pods/attach` and `pods/portforward`: where on which kubelet a Pod's
//! stream is, then [`kubelet_proxy`](super::kubelet_proxy) to reach it.
//!
//! Mirrors `pkg/registry/core/pod/rest/log.go` (`LogREST.Get`: `PodLogOptions` validated, then
//! the location), `pkg/registry/core/pod/rest/subresources.go` (`ExecREST`, `AttachREST`,
//! `PortForwardREST.Connect`: from 1.35 on a `GET` must also be allowed `create`,
//! `AuthorizePodWebsocketUpgradeCreatePermission`; refused as `pods "p" is forbidden: `) and
//! `pkg/registry/core/pod/strategy.go` (`LogLocation`, `streamLocation`, `PortForwardLocation`,
//! `validateContainer`, and the Node's address from `pkg/kubelet/client/kubelet_client.go`).
//!
//! Checked on v1.36.2: a container not named in a Pod of several answers 400 `a container name
//! must be specified for pod p, choose one of: [c d]`; an unknown one 400 `container zz is not
//! valid for pod p`; exec, attach and port-forward of a Pod without a Node 400 `pod p does not
//! have a host assigned`, while its log is an empty `200`; `tailLines=-1` 422 `PodLogOptions "p"
//! is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0`.
//!
//! # Differences from the real server
//! - The Node's address is chosen InternalIP, ExternalIP, then Hostname (kubeadm's
//!   `--kubelet-preferred-address-types`; kube-apiserver's own default tries Hostname first).
//! - Every upgrade (WebSocket, SPDY/3.1, the SPDY-in-WebSocket port-forward tunnel) is passed
//!   through to the kubelet unchanged, as v1.36 does for a Node declaring
//!   `ExtendWebSocketsToKubelet`; a WebSocket is never translated to SPDY for an older kubelet
//!   (the simulated kubelet speaks both).

use bytes::Bytes;
use http::{Method, Request, Response};
use serde_json::Value;

use crate::apiserver::ApiServer;
use crate::authz::{Decision, UserInfo};
use crate::body::BoxBody;
use crate::handlers::kubelet_proxy::{self, Location};
use crate::registry::ResourceDefinition;
use crate::request::query::Query;
use crate::request::requestinfo;
use crate::request::route::Target;
use crate::status::{ApiError, Qualified, cause};

/// The resource named in the 403 of the extra `create` check.
const PODS: Qualified<'static> = Qualified {
    group: "",
    resource: "pods",
};

/// The Node address types tried, best first.
const ADDRESS_TYPES: [&str; 3] = ["InternalIP", "ExternalIP", "Hostname"];

/// What Go's `url.QueryEscape` escapes: everything but letters, digits and `-_.~`.
const QUERY_VALUE: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// The streaming subresources of a Pod.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Connect {
    /// `pods/log`.
    Log,
    /// `pods/exec`.
    Exec,
    /// `pods/attach`.
    Attach,
    /// `pods/portforward`.
    PortForward,
}

impl Connect {
    /// The subresource `name` names, if it is one of these.
    pub(crate) fn named(name: &str) -> Option<Connect> {
        match name {
            "log" => Some(Connect::Log),
            "exec" => Some(Connect::Exec),
            "attach" => Some(Connect::Attach),
            "portforward" => Some(Connect::PortForward),
            _ => None,
        }
    }
}

/// Serves a streaming subresource of the Pod `target` names: its log streamed from the kubelet,
/// or an upgrade passed through to it.
///
/// # Errors
/// As [`locate`], and the kubelet's refusal of a log as [`kubelet_proxy::stream_log`] words it.
pub(crate) async fn serve(
    api: &ApiServer,
    mut request: Request<Bytes>,
    target: &Target,
    (query, user): (&Query, &UserInfo),
) -> Result<Response<BoxBody>, ApiError> {
    let sub = target.subresource.as_deref().unwrap_or_default();
    let connect = Connect::named(sub).ok_or_else(ApiError::unknown_path)?;
    let namespace = target.namespace.as_deref().unwrap_or_default();
    let name = target.name.as_deref().unwrap_or_default();
    let asked = (connect, request.method(), request.uri().path());
    let location = locate(api, (&target.def, namespace, name), asked, (query, user))?;
    match location {
        Some(location) if connect == Connect::Log => {
            kubelet_proxy::stream_log(&location, name).await
        }
        Some(location) => kubelet_proxy::upgrade(&location, &mut request).await,
        // The log of a Pod not yet on a Node: no content, as the real servers answer (1.15 and
        // v1.36: `204 No Content`, no body, no content type).
        None => {
            let mut response = Response::new(crate::body::full(Bytes::new()));
            *response.status_mut() = http::StatusCode::NO_CONTENT;
            Ok(response)
        }
    }
}

/// Checks the request and finds the kubelet URL of its stream; `None` for the log of a Pod not
/// yet on a Node (the real server answers it with no content).
///
/// # Errors
/// 403 without `create` on an upgrade's subresource, 404 for a missing Pod, 400/422 as listed
/// in the module docs, 500 when the Pod's Node is missing or has no usable address.
pub(crate) fn locate(
    api: &ApiServer,
    (def, namespace, name): (&ResourceDefinition, &str, &str),
    (connect, method, path): (Connect, &Method, &str),
    (query, user): (&Query, &UserInfo),
) -> Result<Option<Location>, ApiError> {
    if connect != Connect::Log && *method != Method::POST {
        ensure_create_allowed(api, (method, path, query), user, name)?;
    }
    if connect == Connect::Log {
        validate_log_options(name, query)?;
    }
    let storage = api.inner.storage.lock();
    let (pod, _) = storage.existing(def, (namespace.to_owned(), name.to_owned()))?;
    let pod = &pod.value;
    let container = match connect {
        Connect::PortForward => None,
        _ => Some(container(
            pod,
            name,
            query.get("container").unwrap_or_default(),
        )?),
    };
    let node_name = pod["spec"]["nodeName"].as_str().unwrap_or_default();
    if node_name.is_empty() {
        return match connect {
            Connect::Log => Ok(None),
            _ => Err(ApiError::bad_request(format!(
                "pod {name} does not have a host assigned"
            ))),
        };
    }
    let nodes = storage
        .registry
        .get("", "v1", "nodes")
        .ok_or_else(|| ApiError::internal("nodes are not served"))?;
    let (node, _) = storage.existing(&nodes, (String::new(), node_name.to_owned()))?;
    let (host, port) = kubelet_endpoint(&node.value, node_name)?;
    let path = match (connect, container) {
        (Connect::Log, Some(c)) => format!("/containerLogs/{namespace}/{name}/{c}"),
        (Connect::Exec, Some(c)) => format!("/exec/{namespace}/{name}/{c}"),
        (Connect::Attach, Some(c)) => format!("/attach/{namespace}/{name}/{c}"),
        _ => format!("/portForward/{namespace}/{name}"),
    };
    Ok(Some(Location {
        host,
        port,
        path,
        query: kubelet_query(connect, query),
    }))
}

/// The 1.35+ second check of an upgrade `GET`: the user must also be allowed to `create` the
/// subresource (the first check, made for every request, was for `get`).
fn ensure_create_allowed(
    api: &ApiServer,
    (method, path, query): (&Method, &str, &Query),
    user: &UserInfo,
    name: &str,
) -> Result<(), ApiError> {
    let mut attributes = requestinfo::attributes(method, path, query, user);
    attributes.verb = "create".to_owned();
    match api.inner.authorizer.authorize(&attributes) {
        Decision::Allow { .. } => Ok(()),
        Decision::Deny { reason } | Decision::NoOpinion { reason } => {
            Err(ApiError::forbidden(PODS, name, &reason))
        }
    }
}

/// `ValidatePodLogOptions` (`pkg/apis/core/validation`) on the query.
fn validate_log_options(name: &str, query: &Query) -> Result<(), ApiError> {
    let number = |key: &str| -> Result<Option<i64>, ApiError> {
        query
            .get(key)
            .map(|v| {
                v.parse::<i64>().map_err(|_| {
                    ApiError::bad_request(format!(
                        "couldn't parse {key} {v:?}: strconv.ParseInt: parsing {v:?}: invalid syntax"
                    ))
                })
            })
            .transpose()
    };
    let invalid = |field: &str, value: i64, why: &str| {
        cause(
            "FieldValueInvalid",
            field,
            format!("Invalid value: {value}: {why}"),
        )
    };
    let mut causes = Vec::new();
    if let Some(lines) = number("tailLines")?.filter(|&n| n < 0) {
        causes.push(invalid(
            "tailLines",
            lines,
            "must be greater than or equal to 0",
        ));
    }
    if let Some(bytes) = number("limitBytes")?.filter(|&n| n < 1) {
        causes.push(invalid("limitBytes", bytes, "must be greater than 0"));
    }
    let since_seconds = number("sinceSeconds")?;
    if since_seconds.is_some() && query.get("sinceTime").is_some() {
        causes.push(cause(
            "FieldValueForbidden",
            "",
            "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified",
        ));
    } else if let Some(seconds) = since_seconds.filter(|&n| n < 1) {
        causes.push(invalid("sinceSeconds", seconds, "must be greater than 0"));
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid("", "PodLogOptions", name, causes))
    }
}

/// `validateContainer`: the asked container must exist; none asked picks a Pod's only one.
fn container(pod: &Value, name: &str, asked: &str) -> Result<String, ApiError> {
    let spec = &pod["spec"];
    let names = |field: &str| -> Vec<String> {
        spec[field]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["name"].as_str().map(str::to_owned))
            .collect()
    };
    let containers = names("containers");
    // `VisitContainers` order: init containers, containers, ephemeral containers.
    let all: Vec<String> = [
        names("initContainers"),
        containers.clone(),
        names("ephemeralContainers"),
    ]
    .concat();
    if !asked.is_empty() {
        return if all.iter().any(|c| c == asked) {
            Ok(asked.to_owned())
        } else {
            Err(ApiError::bad_request(format!(
                "container {asked} is not valid for pod {name}"
            )))
        };
    }
    match containers.as_slice() {
        [only] => Ok(only.clone()),
        [] => Err(ApiError::bad_request(format!(
            "a container name must be specified for pod {name}"
        ))),
        _ => Err(ApiError::bad_request(format!(
            "a container name must be specified for pod {name}, choose one of: [{}]",
            all.join(" ")
        ))),
    }
}

/// The Node's kubelet host (by [`ADDRESS_TYPES`]) and port (`daemonEndpoints`).
fn kubelet_endpoint(node: &Value, node_name: &str) -> Result<(String, u16), ApiError> {
    let status = &node["status"];
    let addresses = status["addresses"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let host = ADDRESS_TYPES.iter().find_map(|kind| {
        addresses
            .iter()
            .find(|a| a["type"] == *kind)
            .and_then(|a| a["address"].as_str())
    });
    let Some(host) = host else {
        return Err(ApiError::internal(format!(
            "no preferred addresses found; known addresses: [] (node {node_name})"
        )));
    };
    let port = status["daemonEndpoints"]["kubeletEndpoint"]["Port"]
        .as_u64()
        .and_then(|p| u16::try_from(p).ok())
        .filter(|&p| p > 0)
        .unwrap_or(10250);
    Ok((host.to_owned(), port))
}

/// The kubelet's query: the log options as given, or `streamParams`' names and `1`s.
fn kubelet_query(connect: Connect, query: &Query) -> String {
    let mut params: Vec<(&str, String)> = Vec::new();
    match connect {
        Connect::Log => {
            for key in ["follow", "previous", "timestamps"] {
                if query.flag(key) {
                    params.push((key, "true".to_owned()));
                }
            }
            for key in ["sinceSeconds", "sinceTime", "tailLines", "limitBytes"] {
                if let Some(value) = query.get(key) {
                    params.push((key, value.to_owned()));
                }
            }
        }
        Connect::Exec | Connect::Attach => {
            for (key, param) in [
                ("stdin", "input"),
                ("stdout", "output"),
                ("stderr", "error"),
                ("tty", "tty"),
            ] {
                if query.flag(key) {
                    params.push((param, "1".to_owned()));
                }
            }
            if connect == Connect::Exec {
                for command in query.all("command") {
                    params.push(("command", command.to_owned()));
                }
            }
        }
        Connect::PortForward => {
            let ports: Vec<&str> = query
                .all("ports")
                .into_iter()
                .flat_map(|p| p.split(','))
                .collect();
            if !ports.is_empty() {
                params.push(("port", ports.join(",")));
            }
        }
    }
    params
        .iter()
        .map(|(key, value)| {
            let value = percent_encoding::utf8_percent_encode(value, QUERY_VALUE);
            format!("{key}={value}")
        })
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
#[path = "pod_connect_tests.rs"]
mod tests;
