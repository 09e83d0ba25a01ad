//! What `kubegen import` reports: errors (nothing is written) and warnings (a schema keyword the
//! markers cannot carry yet), each naming the file, the CRD, the version and the schema path.
//!
//! Collected, never thrown: one run lists every problem of every CRD, as the generator's checker
//! does for `apis/`.

/// The collector every import step pushes into.
#[derive(Clone, Debug, Default)]
pub(crate) struct Problems {
    /// `<where>: <what>` lines, in the order found.
    errors: Vec<String>,
    /// Warnings, same form.
    warnings: Vec<String>,
}

impl Problems {
    /// Records an error at `place` (`file#doc (CRD name), version v, at .spec.x`).
    pub(crate) fn push(&mut self, place: &str, message: String) {
        self.errors.push(format!("{place}: {message}"));
    }

    /// Records a warning at `place`.
    pub(crate) fn warn(&mut self, place: &str, message: String) {
        self.warnings.push(format!("{place}: {message}"));
    }

    /// Whether no error was recorded.
    pub(crate) fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// The errors, in order.
    pub(crate) fn lines(&self) -> &[String] {
        &self.errors
    }

    /// The warnings, in order.
    pub(crate) fn warnings(&self) -> &[String] {
        &self.warnings
    }
}
