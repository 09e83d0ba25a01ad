//! Completion indexes of Indexed Jobs: which index a Pod runs, the `completedIndexes` text
//! (`1,3-5,7`), the next indexes to start, and the names their Pods are generated from.
//!
//! Mirrors `pkg/controller/job/indexed_job_utils.go` (`orderedIntervals`,
//! `parseIndexesFromString`, `firstPendingIndexes`, `getCompletionIndex`,
//! `podGenerateNameWithIndex`).

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Pod;

/// The annotation (and, since `PodIndexLabel`, label) holding a Pod's completion index.
pub(crate) const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";

/// The longest `generateName` the API server keeps before its random suffix
/// (`names.MaxGeneratedNameLength`).
const MAX_GENERATED_NAME: usize = 58;

/// A set of indexes as sorted, disjoint, non-adjacent closed intervals (`orderedIntervals`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Intervals(Vec<(usize, usize)>);

impl Intervals {
    /// `completedIndexes` as the API stores it: `1,3-5,7`; indexes at or above `completions`
    /// and malformed parts are dropped (`parseIndexesFromString`).
    pub(crate) fn parse(text: &str, completions: usize) -> Intervals {
        let mut set = BTreeSet::new();
        for part in text.split(',').filter(|p| !p.is_empty()) {
            let (first, last) = match part.split_once('-') {
                Some((a, b)) => (a.parse::<usize>(), b.parse::<usize>()),
                None => (part.parse(), part.parse()),
            };
            let (Ok(first), Ok(last)) = (first, last) else {
                continue;
            };
            set.extend((first..=last.min(completions.saturating_sub(1))).take(completions));
        }
        Intervals::from_sorted(set)
    }

    fn from_sorted(indexes: impl IntoIterator<Item = usize>) -> Intervals {
        let mut intervals: Vec<(usize, usize)> = Vec::new();
        for ix in indexes {
            match intervals.last_mut() {
                Some((_, last)) if *last + 1 >= ix => *last = (*last).max(ix),
                _ => intervals.push((ix, ix)),
            }
        }
        Intervals(intervals)
    }

    /// These intervals plus `indexes` (`withOrderedIndexes`).
    pub(crate) fn with(&self, indexes: impl IntoIterator<Item = usize>) -> Intervals {
        let mut all: BTreeSet<usize> = self.iter().collect();
        all.extend(indexes);
        Intervals::from_sorted(all)
    }

    /// Every index, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().flat_map(|&(first, last)| first..=last)
    }

    /// How many indexes (`total`).
    pub(crate) fn total(&self) -> usize {
        self.0.iter().map(|(first, last)| last - first + 1).sum()
    }

    /// Whether `ix` is in the set (`has`).
    pub(crate) fn has(&self, ix: usize) -> bool {
        self.0
            .iter()
            .any(|&(first, last)| first <= ix && ix <= last)
    }
}

/// `1,3-5,7`: two adjacent indexes are written with a comma, longer runs with a dash.
impl std::fmt::Display for Intervals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, &(first, last)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{first}")?;
            if last == first + 1 {
                write!(f, ",{last}")?;
            } else if last > first {
                write!(f, "-{last}")?;
            }
        }
        Ok(())
    }
}

/// The completion index of a Pod, from its annotation; `None` when absent, malformed or
/// negative (`getCompletionIndex`'s `unknownCompletionIndex`).
pub(crate) fn completion_index(pod: &Pod) -> Option<usize> {
    pod.metadata
        .annotations
        .as_ref()?
        .get(COMPLETION_INDEX)?
        .parse()
        .ok()
}

/// The first `count` indexes below `completions` that are neither in `done` nor run by an
/// active Pod (`firstPendingIndexes`).
pub(crate) fn first_pending(
    done: &Intervals,
    running: impl IntoIterator<Item = usize>,
    count: usize,
    completions: usize,
) -> Vec<usize> {
    let taken = done.with(running);
    (0..completions)
        .filter(|ix| !taken.has(*ix))
        .take(count)
        .collect()
}

/// `<job>-<index>-`, the job name cut so that the whole fits the API server's limit
/// (`podGenerateNameWithIndex`).
pub(crate) fn generate_name(job: &str, index: usize) -> String {
    let suffix = format!("-{index}-");
    let prefix = format!("{job}{suffix}");
    if prefix.len() <= MAX_GENERATED_NAME {
        return prefix;
    }
    let mut cut = MAX_GENERATED_NAME - suffix.len();
    while !job.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}{suffix}", &job[..cut])
}

#[cfg(test)]
#[path = "indexes_tests.rs"]
mod tests;
