//! The managers of a custom resource written through several versions: structured-merge-diff's
//! `versionConverter`, as apiextensions-apiserver gives each version its own field manager. A
//! managedFields entry keeps the version its manager wrote through, so a write compares the old
//! and new object in each entry's version and every manager settles against what changed in
//! its own version (`crate::apply`): the writer's entry is in the request's version with that
//! version's field names, an apply conflicts with the managers of other versions on what
//! changed in theirs.
//!
//! The write itself — the incoming object made in the request's version, admitted there and
//! stored in the storage version — is the handlers' (`crate::handlers::versioned`); this module
//! only answers, for an object in several versions ([`super::edge::Views`]), who owns what.

use serde_json::{Map, Value};

use kubegen_apply::{Merged, Tracker};

use crate::apply::KindSchemas;
use crate::kinds::custom_resource::edge::{Edge, Views, in_version, view};
use crate::request::scope::Scope;
use crate::status::ApiError;
use crate::storage::State;

/// The incoming object of a write in the request's version, before its managers settle: the
/// object an update, a patch or a scale makes, or an apply's merged configuration.
pub(crate) enum Incoming {
    Update(Value),
    Apply(Box<Merged>),
}

impl Incoming {
    /// The object, whatever made it.
    pub(crate) fn object(&self) -> &Value {
        match self {
            Incoming::Update(object) => object,
            Incoming::Apply(merged) => &merged.object,
        }
    }
}

/// The schemas of the versions a write settles in, with the request's scope in each: what the
/// trackers of each version need, loaded once under the storage lock.
pub(crate) struct VersionSchemas(Vec<(Scope, KindSchemas)>);

impl VersionSchemas {
    /// The schemas of `versions` of the edge's kind.
    ///
    /// # Errors
    /// 500 when a version's schema cannot be built.
    pub(crate) fn load(
        state: &State,
        edge: &Edge,
        versions: &[String],
    ) -> Result<VersionSchemas, ApiError> {
        versions
            .iter()
            .map(|version| {
                let scope = in_version(&edge.request_scope, version);
                KindSchemas::load(state, &scope.def).map(|schemas| (scope, schemas))
            })
            .collect::<Result<_, _>>()
            .map(VersionSchemas)
    }

    /// The tracker of this write in `version`, if it is one of those loaded.
    pub(crate) fn tracker(&self, version: &str) -> Option<Tracker<'_>> {
        let (scope, schemas) = self.0.iter().find(|(s, _)| s.def.version == version)?;
        Some(schemas.tracker(scope))
    }

    /// The tracker of this write in the request's version of `edge`.
    ///
    /// # Errors
    /// 500 when that version was not loaded.
    pub(crate) fn request_tracker(&self, edge: &Edge) -> Result<Tracker<'_>, ApiError> {
        self.tracker(edge.request_version())
            .ok_or_else(|| ApiError::internal("the request's version is not served"))
    }
}

impl Edge {
    /// The managers settled, each in its own version (`olds` and `news`: the stored and the
    /// incoming object in every settling version); the object in the request's version with its
    /// managedFields.
    ///
    /// # Errors
    /// An apply's conflicts (409), or a tracker's failure.
    pub(crate) fn settle(
        &self,
        schemas: &VersionSchemas,
        incoming: Incoming,
        olds: &Views,
        news: &Views,
    ) -> Result<Map<String, Value>, ApiError> {
        let request = self.request_version();
        let mut elsewhere = Vec::new();
        for (version, old) in olds.iter().filter(|(version, _)| version != request) {
            let (Some(tracker), Some(new)) = (schemas.tracker(version), view(news, version)) else {
                continue;
            };
            if let Some(changes) = tracker.changes(Some(old), new) {
                elsewhere.push((self.versions.api_version(version), changes));
            }
        }
        let tracker = schemas.request_tracker(self)?;
        let object = match incoming {
            Incoming::Update(mut object) => {
                tracker.record_update(view(olds, request), &mut object, &elsewhere)?;
                object
            }
            Incoming::Apply(merged) => tracker.settle(*merged, &elsewhere)?,
        };
        match object {
            Value::Object(object) => Ok(object),
            _ => Err(ApiError::internal("the tracked object is not an object")),
        }
    }
}
