//! What a request asks to do, in the authorizer's terms: the Kubernetes verb, namespace, API group,
//! resource, subresource and name of a resource request, or the path of a non-resource request.
//! Mirrors apiserver `pkg/endpoints/request/requestinfo.go` (`RequestInfoFactory`), which the
//! real server runs before authorization, so it reads the URL alone and knows nothing about which
//! resources exist: a request for a resource nobody serves is authorized (and denied) first and
//! only then answered 404, as on a real server.
//!
//! Also the 403 a denial answers (apiserver `endpoints/handlers/responsewriters.Forbidden`).

use http::Method;

use crate::audit::RequestAudit;
use crate::authz::{Attributes, Authorizer, Decision, UserInfo};
use crate::request::query::Query;
use crate::status::{ApiError, Qualified};
use crate::verb::Verb;

/// Asks the server's authorizer whether the request `attributes` describe may be made: the one
/// authorization check every request passes, before routing (apiserver
/// `filters.WithAuthorization`), its answer recorded in the request's audit event. Returns the
/// verb of a resource request (None for non-resource requests and methods without one), derived
/// here once for authorization and dispatch alike.
///
/// # Errors
/// 403 Forbidden worded like the real server when the authorizer does not allow it.
pub(crate) fn authorize(
    authorizer: &dyn Authorizer,
    attributes: &Attributes,
    audit: &RequestAudit,
) -> Result<Option<Verb>, ApiError> {
    match authorizer.authorize(attributes) {
        Decision::Allow { reason } => {
            audit.authorized(true, &reason);
            if attributes.resource.is_empty() {
                Ok(None)
            } else {
                Ok(Verb::named(&attributes.verb))
            }
        }
        Decision::Deny { reason } | Decision::NoOpinion { reason } => {
            audit.authorized(false, &reason);
            Err(forbidden(attributes, &reason))
        }
    }
}

/// The authorizer's question for a request by `user`.
pub(crate) fn attributes(
    method: &Method,
    path: &str,
    query: &Query,
    user: &UserInfo,
) -> Attributes {
    let method_verb = method.as_str().to_ascii_lowercase();
    let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let non_resource = || Attributes {
        user: user.clone(),
        verb: method_verb.clone(),
        path: path.to_string(),
        ..Attributes::default()
    };
    let (group, rest) = match parts.as_slice() {
        ["api", rest @ ..] if rest.len() >= 2 => ("", rest),
        ["apis", group, rest @ ..] if rest.len() >= 2 => (*group, rest),
        _ => return non_resource(),
    };
    let (version, rest) = (rest[0], &rest[1..]);
    let (watch_path, rest) = match rest {
        ["watch", tail @ ..] => (true, tail),
        _ => (false, rest),
    };
    let (namespace, rest) = split_namespace(rest);
    let named = rest.len() > 1;
    let verb = Verb::of(method, named, watch_path, query.flag("watch"))
        .map_or(method_verb, |verb| verb.as_str().to_string());
    let name = if named {
        rest[1].to_string()
    } else {
        name_from_field_selector(&verb, query)
    };
    Attributes {
        user: user.clone(),
        verb,
        namespace,
        group: group.to_string(),
        version: version.to_string(),
        resource: rest.first().map(|s| s.to_string()).unwrap_or_default(),
        name,
        subresource: rest.get(2).map(|s| s.to_string()).unwrap_or_default(),
        ..Attributes::default()
    }
}

/// `/namespaces/<ns>/<rest>` names the namespace and what is in it; `/namespaces/<ns>` and its
/// own subresources (`status`, `finalize`) are the Namespace object, whose name is also the
/// request's namespace.
fn split_namespace<'a>(rest: &'a [&'a str]) -> (String, &'a [&'a str]) {
    match rest {
        ["namespaces", ns, tail @ ..] => {
            let own_subresource = matches!(tail.first(), Some(&"status" | &"finalize"));
            if tail.is_empty() || own_subresource {
                (ns.to_string(), rest)
            } else {
                (ns.to_string(), tail)
            }
        }
        _ => (String::new(), rest),
    }
}

/// A list or watch selecting one name with `fieldSelector=metadata.name=<n>` is authorized for
/// that name (so `resourceNames` rules allow an informer on one object).
fn name_from_field_selector(verb: &str, query: &Query) -> String {
    if !matches!(verb, "list" | "watch") {
        return String::new();
    }
    let selector = query.get("fieldSelector").unwrap_or_default();
    let name = selector
        .split(',')
        .find_map(|term| {
            term.strip_prefix("metadata.name==")
                .or_else(|| term.strip_prefix("metadata.name="))
        })
        .unwrap_or_default();
    let valid_segment = !matches!(name, "." | "..") && !name.contains(['/', '%']);
    if valid_segment {
        name.to_string()
    } else {
        String::new()
    }
}

/// The 403 for a denied request, worded like v1.36 (and v1.15, which words it the same):
/// `<resource>[.<group>] ["<name>"] is forbidden: User "<u>" cannot <verb> resource
/// "<resource>[/<sub>]" in API group "<group>" in the namespace "<ns>"` (or `at the cluster
/// scope`), and `forbidden: User "<u>" cannot <verb> path "<path>"` for non-resource requests. An
/// authorizer's non-empty reason follows after `: `.
pub(crate) fn forbidden(attributes: &Attributes, reason: &str) -> ApiError {
    let user = &attributes.user.name;
    let verb = &attributes.verb;
    let mut why = if attributes.resource.is_empty() {
        format!("User {user:?} cannot {verb} path {:?}", attributes.path)
    } else {
        let mut resource = attributes.resource.clone();
        if !attributes.subresource.is_empty() {
            resource = format!("{resource}/{}", attributes.subresource);
        }
        let scope = if attributes.namespace.is_empty() {
            "at the cluster scope".to_string()
        } else {
            format!("in the namespace {:?}", attributes.namespace)
        };
        format!(
            "User {user:?} cannot {verb} resource {resource:?} in API group {:?} {scope}",
            attributes.group
        )
    };
    if !reason.is_empty() {
        why = format!("{why}: {reason}");
    }
    if attributes.resource.is_empty() {
        return ApiError::forbidden_path(&why);
    }
    let what = Qualified {
        group: &attributes.group,
        resource: &attributes.resource,
    };
    let name = Some(attributes.name.as_str()).filter(|n| !n.is_empty());
    ApiError::denied(what, name, &why)
}

#[cfg(test)]
#[path = "requestinfo_tests.rs"]
mod tests;
