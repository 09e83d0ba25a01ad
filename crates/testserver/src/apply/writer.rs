//! Who writes: the field manager a write's `managedFields` entry is recorded under, from the
//! request's `fieldManager`, `force` and `User-Agent` (apiserver `prefixFromUserAgent`).

use http::HeaderMap;
use http::header::USER_AGENT;

use crate::request::query::Query;
use crate::status::{ApiError, Cause};

/// Who writes, from the request: `fieldManager`, `force` and the `User-Agent`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Writer {
    /// `?fieldManager=`, if given.
    pub(crate) field_manager: Option<String>,
    /// The `User-Agent` up to its first `/` (apiserver `prefixFromUserAgent`).
    pub(crate) agent: String,
    /// `?force=true`.
    pub(crate) force: bool,
}

impl Writer {
    pub(crate) fn from_request(headers: &HeaderMap, query: &Query) -> Writer {
        let agent = headers
            .get(USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        Writer {
            field_manager: query.get("fieldManager").map(String::from),
            agent: agent.split('/').next().unwrap_or("").to_string(),
            force: query.flag("force"),
        }
    }

    /// The manager an `Update` is recorded under; `unknown` when neither names one (v1.36 records a
    /// write without a `User-Agent` so).
    pub(crate) fn manager(&self) -> &str {
        match self.field_manager.as_deref().unwrap_or(&self.agent) {
            "" => "unknown",
            named => named,
        }
    }

    /// `force` outside an apply.
    ///
    /// # Errors
    /// 422 `PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for
    /// non-apply patch` (checked on v1.36).
    pub(crate) fn check_no_force(&self) -> Result<(), ApiError> {
        if !self.force {
            return Ok(());
        }
        let cause = Cause {
            reason: "FieldValueForbidden".into(),
            message: "Forbidden: may not be specified for non-apply patch".into(),
            field: "force".into(),
        };
        Err(ApiError::invalid(
            "meta.k8s.io",
            "PatchOptions",
            "",
            vec![cause],
        ))
    }

    /// The manager of an apply.
    ///
    /// # Errors
    /// 422 `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required
    /// for apply patch` without one (checked on v1.36).
    pub(crate) fn applier(&self) -> Result<&str, ApiError> {
        match self.field_manager.as_deref() {
            Some(m) if !m.is_empty() => Ok(m),
            _ => Err(ApiError::invalid(
                "meta.k8s.io",
                "PatchOptions",
                "",
                vec![Cause {
                    reason: "FieldValueRequired".into(),
                    message: "Required value: is required for apply patch".into(),
                    field: "fieldManager".into(),
                }],
            )),
        }
    }
}
