//! Diagnostics: every problem found in `apis/`, with a place and a hint.
//!
//! Parsing and checking never stop at the first problem: they push into [`Diagnostics`] and carry
//! on, so one run of `kubegen` lists everything the user has to fix (serde_derive and cxx do the
//! same with their error collectors). Nothing is written when any diagnostic exists.

use std::fmt;

use crate::model::Location;

/// One problem in the input.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Diagnostic {
    /// Where the problem is.
    pub location: Location,
    /// What is wrong, e.g. ``unknown tag `+genclient:nonNamespace` ``.
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

impl fmt::Display for Diagnostic {
    /// `apis/police/v1beta1/white_list.rs:12: unknown tag ...` then an indented hint line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}\n  hint: {}",
            self.location.file.display(),
            self.location.line,
            self.message,
            self.hint
        )
    }
}

/// The collector the parser and checker push into.
#[derive(Debug, Default)]
pub(crate) struct Diagnostics {
    /// Problems in the order found; sorted by location before they are reported.
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    /// Records one problem.
    pub(crate) fn error(
        &mut self,
        location: &Location,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) {
        self.items.push(Diagnostic {
            location: location.clone(),
            message: message.into(),
            hint: hint.into(),
        });
    }

    /// Whether nothing was reported.
    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// All problems, sorted by file and line (stable for equal places), duplicates removed.
    pub(crate) fn into_sorted(mut self) -> Vec<Diagnostic> {
        self.items.sort_by(|a, b| a.location.cmp(&b.location));
        self.items.dedup();
        self.items
    }
}
