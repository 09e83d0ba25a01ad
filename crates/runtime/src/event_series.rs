//! Series aggregation of `events.k8s.io/v1` Events: what client-go's new-style broadcaster
//! (`tools/events/event_broadcaster.go`: `recordToSink`, `finishSeries`,
//! `refreshExistingEventSeries`, `getKey`) does between "the controller recorded it" and "the API
//! server stores it". Pure and synchronous, with time passed in, so every rule is tested without
//! a clock.
//!
//! # The rule
//! Two Events are *isomorphic* when they agree on everything but their note, time and name:
//! type, action, reason, reporting controller and instance, regarding and related object. The
//! first of a kind is created. The second turns the first into a series: the stored Event is
//! patched with `series: {count: 2, lastObservedTime}`. Later ones only count, in memory; the
//! series reaches the server when it is *finished* (no new occurrence for [`FINISH_TIME`]: its
//! last state is written and it is forgotten) or *refreshed* (every [`REFRESH_TIME`] every open
//! series is written again, so a long-running series shows progress). Events that never became
//! a series are forgotten [`FINISH_TIME`] after they happened.
//!
//! # Differences from client-go's core/v1 correlator
//! No spam filter and no message aggregation: the new API replaced both with series, and client-go
//! applies neither to it.

use std::collections::HashMap;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;

/// A series without a new occurrence for this long is written one last time and forgotten
/// (client-go's `finishTime`); so is a single Event this old.
pub const FINISH_TIME: Duration = Duration::from_secs(6 * 60);
/// Every open series is written again this often (client-go's `refreshTime`).
pub const REFRESH_TIME: Duration = Duration::from_secs(30 * 60);

/// What to write for one recorded Event.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Write {
    /// A new Event object.
    Create(Event),
    /// The stored Event of its kind became a series: patch its `series` (and create it if it is
    /// gone).
    Patch(Event),
}

/// Everything of an Event but its note, time and name (client-go's `eventKey`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct SeriesKey {
    type_: Option<String>,
    action: Option<String>,
    reason: Option<String>,
    reporting_controller: Option<String>,
    reporting_instance: Option<String>,
    regarding: Reference,
    related: Reference,
}

/// The identifying fields of an object reference (all of them, as Go compares the struct).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Reference([Option<String>; 7]);

impl Reference {
    fn of(reference: Option<&ObjectReference>) -> Reference {
        let Some(r) = reference else {
            return Reference::default();
        };
        Reference([
            r.api_version.clone(),
            r.kind.clone(),
            r.namespace.clone(),
            r.name.clone(),
            r.uid.clone(),
            r.resource_version.clone(),
            r.field_path.clone(),
        ])
    }
}

fn key_of(event: &Event) -> SeriesKey {
    SeriesKey {
        type_: event.type_.clone(),
        action: event.action.clone(),
        reason: event.reason.clone(),
        reporting_controller: event.reporting_controller.clone(),
        reporting_instance: event.reporting_instance.clone(),
        regarding: Reference::of(event.regarding.as_ref()),
        related: Reference::of(event.related.as_ref()),
    }
}

/// The Events recorded recently, one per kind, as last written or counted.
///
/// # Invariants
/// Every cached Event has an `eventTime`; a cached series has `count >= 2`.
#[derive(Debug, Default)]
pub(crate) struct SeriesCache {
    events: HashMap<SeriesKey, Event>,
}

impl SeriesCache {
    /// Records `event` (with its `eventTime` set) at `now`; returns what to write, if anything.
    pub(crate) fn observe(&mut self, event: Event, now: Timestamp) -> Option<Write> {
        let key = key_of(&event);
        let Some(cached) = self.events.get_mut(&key) else {
            self.events.insert(key, event.clone());
            return Some(Write::Create(event));
        };
        let observed = MicroTime(now);
        if let Some(series) = &mut cached.series {
            series.count = series.count.saturating_add(1);
            series.last_observed_time = observed;
            return None;
        }
        cached.series = Some(EventSeries {
            count: 2,
            last_observed_time: observed,
        });
        Some(Write::Patch(cached.clone()))
    }

    /// The series idle for [`FINISH_TIME`] at `now`, to write one last time; they and the single
    /// Events older than that are forgotten.
    pub(crate) fn finish(&mut self, now: Timestamp) -> Vec<Event> {
        let mut finished = Vec::new();
        self.events.retain(|_, event| {
            let last = match &event.series {
                Some(series) => series.last_observed_time.0,
                None => event.event_time.as_ref().map_or(now, |t| t.0),
            };
            // client-go: `last.Before(now - finishTime)`.
            let idle = now.duration_since(last).as_secs_f64() > FINISH_TIME.as_secs_f64();
            if idle && event.series.is_some() {
                finished.push(event.clone());
            }
            !idle
        });
        finished
    }

    /// Every open series, to write again ([`REFRESH_TIME`]).
    pub(crate) fn open_series(&self) -> Vec<Event> {
        let mut open: Vec<Event> = self
            .events
            .values()
            .filter(|event| event.series.is_some())
            .cloned()
            .collect();
        open.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        open
    }

    /// Checks the invariants.
    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        for event in self.events.values() {
            assert!(
                event.event_time.is_some(),
                "{:?} has no eventTime",
                event.metadata.name
            );
            if let Some(series) = &event.series {
                assert!(series.count >= 2, "a series counts at least 2");
            }
        }
    }
}

#[cfg(test)]
#[path = "event_series_tests.rs"]
mod tests;
