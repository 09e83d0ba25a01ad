//! When a CronJob runs: its `schedule` read as a standard cron line (five fields or an
//! `@hourly`-style descriptor, parsed by `croner`) in its `timeZone`, the most recent time it
//! should have started, and when to look again.
//!
//! Mirrors `pkg/controller/cronjob/utils.go` (`mostRecentScheduleTime`,
//! `nextScheduleTimeDuration`, `getJobName`, `getTimeHashInMinutes`) and `formatSchedule` of
//! `cronjob_controllerv2.go`. robfig/cron's `@every <duration>` is not read (croner has no such
//! form): such a CronJob gets an `UnparseableSchedule` Event and never runs.

use std::time::Duration;

use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use k8s_openapi::jiff::{SignedDuration, Timestamp, Zoned, tz::TimeZone};

/// The padding after a scheduled time before the controller looks again (`nextScheduleDelta`).
const NEXT_SCHEDULE_DELTA: Duration = Duration::from_millis(100);
/// More missed starts than this are reported as too many (`manyMissed`).
const MANY_MISSED: i64 = 100;

/// A parsed schedule in its time zone.
#[derive(Clone, Debug)]
pub(crate) struct Schedule {
    cron: Cron,
    zone: TimeZone,
}

/// Why a schedule cannot be used.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ScheduleError {
    /// `timeZone` names no zone this machine knows (`UnknownTimeZone`).
    UnknownTimeZone(String),
    /// The cron line does not parse (`UnparseableSchedule`).
    Unparseable(String),
}

impl Schedule {
    /// `schedule` in `time_zone` (UTC when absent, as kube-controller-manager's `time.Local`
    /// in its container). A `TZ=`/`CRON_TZ=` prefix in the line names the zone instead.
    pub(crate) fn parse(
        schedule: &str,
        time_zone: Option<&str>,
    ) -> Result<Schedule, ScheduleError> {
        let mut line = schedule.trim();
        let mut zone = match time_zone {
            None | Some("") => TimeZone::UTC,
            Some(name) => TimeZone::get(name)
                .map_err(|e| ScheduleError::UnknownTimeZone(format!("{name:?}: {e}")))?,
        };
        if let Some(rest) = line
            .strip_prefix("CRON_TZ=")
            .or_else(|| line.strip_prefix("TZ="))
        {
            let (name, cron) = rest.split_once(' ').unwrap_or((rest, ""));
            zone = TimeZone::get(name).map_err(|e| {
                ScheduleError::Unparseable(format!("provided bad location {name}: {e}"))
            })?;
            line = cron.trim();
        }
        let parser = CronParser::builder()
            .seconds(Seconds::Disallowed)
            .year(Year::Disallowed)
            .build();
        let cron = parser
            .parse(line)
            .map_err(|e| ScheduleError::Unparseable(e.to_string()))?;
        Ok(Schedule { cron, zone })
    }

    /// The first scheduled time strictly after `t` (robfig's `Schedule.Next`).
    pub(crate) fn next(&self, t: Timestamp) -> Option<Timestamp> {
        let zoned = Zoned::new(t, self.zone.clone());
        self.cron
            .find_next_occurrence(&zoned, false)
            .ok()
            .map(|z| z.timestamp())
    }

    /// The time zone the schedule is read in.
    pub(crate) fn zone(&self) -> &TimeZone {
        &self.zone
    }
}

/// What [`most_recent`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Recent {
    /// Where the search started: the last schedule time, else the creation time (later if the
    /// starting deadline says so).
    pub(crate) earliest: Timestamp,
    /// The latest scheduled time not after `now`, if any was missed since `earliest`.
    pub(crate) most_recent: Option<Timestamp>,
    /// How many scheduled times passed since `earliest` (an estimate, as upstream's).
    pub(crate) missed: i64,
}

/// `mostRecentScheduleTime`.
///
/// # Errors
/// A schedule whose two next times are less than a second apart (one that never fires, like
/// February 31st).
pub(crate) fn most_recent(
    schedule: &Schedule,
    earliest: Timestamp,
    starting_deadline: Option<i64>,
    now: Timestamp,
) -> Result<Recent, String> {
    let mut earliest = earliest;
    if let Some(deadline) = starting_deadline {
        let limit = now - SignedDuration::from_secs(deadline);
        earliest = earliest.max(limit);
    }
    let none = Recent {
        earliest,
        most_recent: None,
        missed: 0,
    };
    let (Some(t1), Some(t2)) = (
        schedule.next(earliest),
        schedule.next(earliest).and_then(|t| schedule.next(t)),
    ) else {
        return Err("the schedule has no next time".into());
    };
    if now < t1 {
        return Ok(none);
    }
    if now < t2 {
        return Ok(Recent {
            most_recent: Some(t1),
            missed: 0,
            ..none
        });
    }
    let between = t2.duration_since(t1).as_secs();
    if between < 1 {
        return Err("time difference between two schedules is less than 1 second".into());
    }
    let elapsed = now.duration_since(t1).as_secs();
    let missed = elapsed / between + 1;
    // One interval before the estimated first of the last ones, so `next` finds it exactly.
    let potential = t1 + SignedDuration::from_secs((missed - 2) * between);
    let mut most_recent = None;
    let mut t = schedule.next(potential);
    while let Some(at) = t.filter(|at| *at <= now) {
        most_recent = Some(at);
        t = schedule.next(at);
    }
    Ok(Recent {
        earliest,
        most_recent,
        missed,
    })
}

/// Whether [`Recent::missed`] is too many to start them all (`manyMissed`).
pub(crate) fn too_many_missed(recent: &Recent) -> bool {
    recent.missed > MANY_MISSED
}

/// How long until the controller looks again: just after the next scheduled time
/// (`nextScheduleTimeDuration`).
pub(crate) fn next_after(
    schedule: &Schedule,
    last: Option<Timestamp>,
    created: Timestamp,
    now: Timestamp,
) -> Duration {
    let from = match most_recent(schedule, last.unwrap_or(created), None, now) {
        Err(_) => now,
        Ok(Recent {
            most_recent: Some(t),
            ..
        }) => t,
        Ok(Recent {
            missed: 0,
            earliest,
            ..
        }) => earliest,
        Ok(_) => now,
    };
    let Some(next) = schedule.next(from) else {
        return Duration::from_secs(3600);
    };
    let wait = Duration::try_from(next.duration_since(now)).unwrap_or(Duration::ZERO);
    wait + NEXT_SCHEDULE_DELTA
}

/// `<cronjob>-<minutes since the epoch of the scheduled time>` (`getJobName`).
pub(crate) fn job_name(cronjob: &str, scheduled: Timestamp) -> String {
    format!("{cronjob}-{}", scheduled.as_second().div_euclid(60))
}

/// The scheduled time in the schedule's zone, RFC 3339 to the second, as the
/// `batch.kubernetes.io/cronjob-scheduled-timestamp` annotation holds it.
pub(crate) fn scheduled_stamp(schedule: &Schedule, scheduled: Timestamp) -> String {
    let zoned = Zoned::new(scheduled, schedule.zone().clone());
    if zoned.offset().seconds() == 0 {
        return zoned.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    }
    zoned.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
}

#[cfg(test)]
#[path = "schedule_tests.rs"]
mod tests;
