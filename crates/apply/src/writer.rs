//! [`Writer`]: who writes, the field manager a write's `managedFields` entry is recorded under
//! (apiserver `fieldmanager` with the request's `PatchOptions`). Reading it from a request
//! (`?fieldManager=`, `?force=`, the `User-Agent`) is the server's.

use crate::error::Error;

/// Who writes: the request's `fieldManager`, `force`, and its `User-Agent` up to the first `/`
/// (apiserver `prefixFromUserAgent`: `curl/8.5` -> `curl`; kubectl sends `kubectl-create`,
/// `kubectl-edit`, ...).
#[derive(Clone, Debug, Default)]
pub struct Writer {
    /// `?fieldManager=`, if given.
    pub field_manager: Option<String>,
    /// The `User-Agent` up to its first `/`.
    pub agent: String,
    /// `?force=true`.
    pub force: bool,
}

impl Writer {
    /// The manager an `Update` is recorded under: `fieldManager`, else the agent; `unknown` when
    /// neither names one (v1.36 records a write without a `User-Agent` so).
    pub fn manager(&self) -> &str {
        match self.field_manager.as_deref().unwrap_or(&self.agent) {
            "" => "unknown",
            named => named,
        }
    }

    /// Refuses `force` outside an apply.
    ///
    /// # Errors
    /// [`Error::ForceOutsideApply`] (checked on v1.36).
    pub fn check_no_force(&self) -> Result<(), Error> {
        match self.force {
            true => Err(Error::ForceOutsideApply),
            false => Ok(()),
        }
    }

    /// The manager of an apply.
    ///
    /// # Errors
    /// [`Error::FieldManagerRequired`] without one (checked on v1.36).
    pub fn applier(&self) -> Result<&str, Error> {
        match self.field_manager.as_deref() {
            Some(m) if !m.is_empty() => Ok(m),
            _ => Err(Error::FieldManagerRequired),
        }
    }
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
