//! The Kubernetes verb of a request, derived once from the method and the path (apiserver
//! `pkg/endpoints/request/requestinfo.go`, `RequestInfoFactory`): authorization reads it, the
//! pipeline dispatches on it, faults, admission, field validation, the router and the kinds'
//! strategies match on it. It sits at the bottom of the crate so that every layer takes the enum,
//! never its name; the fake clientset (`kubegen-fake`) records its actions with the same enum.

use std::fmt;

use http::Method;

/// The eight verbs of resource requests, named as in RBAC rules ([`Verb::as_str`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verb {
    /// `GET` of one named object.
    Get,
    /// `GET` of a collection.
    List,
    /// `GET` of a collection with `watch=true` (or under the legacy `/watch/` prefix).
    Watch,
    /// `POST` to a collection (or to a named object's subresource).
    Create,
    /// `PUT` of a named object.
    Update,
    /// `PATCH` of a named object.
    Patch,
    /// `DELETE` of a named object.
    Delete,
    /// `DELETE` of a collection.
    DeleteCollection,
}

impl Verb {
    /// The verb a resource request makes, by `RequestInfoFactory`'s rules: POST creates, GET and
    /// HEAD get, PUT updates, PATCH patches, DELETE deletes; the legacy `/watch/` prefix makes a
    /// watch; without a name a get is a list (a watch with `?watch`) and a delete a
    /// deletecollection. None for any other method (authorization then sees the lower-cased
    /// method; the pipeline answers 405).
    pub(crate) fn of(
        method: &Method,
        named: bool,
        watch_path: bool,
        watch_param: bool,
    ) -> Option<Verb> {
        if watch_path {
            // The factory takes the prefix's verb whatever the method.
            return Some(Verb::Watch);
        }
        let verb = match *method {
            Method::POST => Verb::Create,
            Method::GET | Method::HEAD => Verb::Get,
            Method::PUT => Verb::Update,
            Method::PATCH => Verb::Patch,
            Method::DELETE => Verb::Delete,
            _ => return None,
        };
        Some(match verb {
            Verb::Get if !named && watch_param => Verb::Watch,
            Verb::Get if !named => Verb::List,
            Verb::Delete if !named => Verb::DeleteCollection,
            other => other,
        })
    }

    /// Every verb, in the order the real server's discovery lists a built-in kind's.
    pub(crate) const ALL: [Verb; 8] = [
        Verb::Create,
        Verb::Delete,
        Verb::DeleteCollection,
        Verb::Get,
        Verb::List,
        Verb::Patch,
        Verb::Update,
        Verb::Watch,
    ];

    /// The verb's name in RBAC rules, discovery and `Status` messages: `get`, ...,
    /// `deletecollection`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
        }
    }

    /// The verb named `name` (the inverse of [`Verb::as_str`]); None for other names, such as
    /// the lower-cased method authorization sees for a method without a verb.
    pub(crate) fn named(name: &str) -> Option<Verb> {
        Verb::ALL.into_iter().find(|verb| verb.as_str() == name)
    }

    /// Whether the verb only reads (its body, if any, is ignored).
    pub(crate) fn is_read(self) -> bool {
        matches!(self, Verb::Get | Verb::List | Verb::Watch)
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in [
            "get",
            "list",
            "watch",
            "create",
            "update",
            "patch",
            "delete",
            "deletecollection",
        ] {
            assert_eq!(Verb::named(name).map(Verb::as_str), Some(name));
        }
        assert_eq!(Verb::named("options"), None);
    }

    #[test]
    fn verbs_follow_the_request_info_factory() {
        let cases = [
            (Method::GET, true, false, false, Some(Verb::Get)),
            (Method::HEAD, true, false, false, Some(Verb::Get)),
            (Method::GET, false, false, false, Some(Verb::List)),
            (Method::HEAD, false, false, false, Some(Verb::List)),
            (Method::GET, false, false, true, Some(Verb::Watch)),
            (Method::GET, true, false, true, Some(Verb::Get)),
            (Method::GET, true, true, false, Some(Verb::Watch)),
            (Method::POST, false, false, false, Some(Verb::Create)),
            (Method::POST, true, false, false, Some(Verb::Create)),
            (Method::PUT, true, false, false, Some(Verb::Update)),
            (Method::PUT, false, false, false, Some(Verb::Update)),
            (Method::PATCH, true, false, false, Some(Verb::Patch)),
            (Method::POST, false, true, false, Some(Verb::Watch)),
            (Method::DELETE, true, false, false, Some(Verb::Delete)),
            (
                Method::DELETE,
                false,
                false,
                false,
                Some(Verb::DeleteCollection),
            ),
            (Method::OPTIONS, false, false, false, None),
            (
                Method::from_bytes(b"PROPFIND").unwrap(),
                true,
                false,
                false,
                None,
            ),
        ];
        for (method, named, path, param, want) in cases {
            assert_eq!(
                Verb::of(&method, named, path, param),
                want,
                "{method} {named} {path} {param}"
            );
        }
    }
}
