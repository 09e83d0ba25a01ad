//! The load: object changes at a paced rate, each stamped with the time it was sent.
//!
//! A change is a merge patch of one annotation ([`SENT_AT`], microseconds since the Unix epoch,
//! read just before the request leaves). The objects are changed round robin over the whole
//! population, so at the rates measured here (hundreds per second over 10,000 objects) an object
//! changes again only after many seconds: no change hides another in the workqueue, and every
//! one gets its own reconcile. Requests go out on a 5 ms tick, as many as the rate owes by then,
//! with at most `MAX_IN_FLIGHT` unanswered: a server that cannot take the rate shows up as
//! fewer changes made than offered ([`Drive::rate`]), never as a silently lower load.

use std::time::Duration;

use anyhow::Result;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use k8s_openapi::api::core::v1::ConfigMap;
use kubegen_client::{Client, Patch, PatchOptions, ResourceClient};
use serde_json::json;
use tokio::time::{Instant, MissedTickBehavior};

use super::{SENT_AT, now_us};
use crate::data::config_map_name;

/// Unanswered patches at most.
const MAX_IN_FLIGHT: usize = 256;

/// How often the driver catches up with its rate.
const TICK: Duration = Duration::from_millis(5);

/// One change the server accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The object's name.
    pub name: String,
    /// Its stamp: when the patch was sent, µs since the Unix epoch.
    pub sent_us: u64,
}

/// What one stretch of load did.
#[derive(Clone, Debug, Default)]
pub struct Drive {
    /// The changes the server accepted, by their stamps.
    pub changes: Vec<Change>,
    /// Patches that failed.
    pub failed: usize,
    /// When the stretch started and ended, µs since the Unix epoch.
    pub window_us: (u64, u64),
}

impl Drive {
    /// Changes made per second.
    pub fn rate(&self) -> f64 {
        let (start, end) = self.window_us;
        let seconds = end.saturating_sub(start) as f64 / 1e6;
        if seconds <= 0.0 {
            return 0.0;
        }
        self.changes.len() as f64 / seconds
    }
}

/// Changes the ConfigMaps `0..population` of one namespace, round robin.
pub struct Driver {
    objects: ResourceClient<ConfigMap>,
    population: usize,
    next: usize,
}

impl Driver {
    /// A driver over the `population` ConfigMaps (named by [`config_map_name`]) of `namespace`.
    pub fn new(client: Client, namespace: &str, population: usize) -> Driver {
        Driver {
            objects: ResourceClient::namespaced(client, namespace),
            population: population.max(1),
            next: 0,
        }
    }

    /// Offers `rate` changes per second for `duration`, then waits for the answers of the
    /// patches in flight.
    pub async fn drive(&mut self, rate: f64, duration: Duration) -> Drive {
        let start = Instant::now();
        let mut drive = Drive {
            window_us: (now_us(), 0),
            ..Drive::default()
        };
        let mut in_flight = FuturesUnordered::new();
        let mut issued = 0u64;
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => {
                    let elapsed = start.elapsed();
                    if elapsed >= duration {
                        break;
                    }
                    // Whole changes owed so far; the conversion truncates on purpose.
                    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                    let due = (rate * elapsed.as_secs_f64()) as u64;
                    while issued < due && in_flight.len() < MAX_IN_FLIGHT {
                        let name = config_map_name(self.next % self.population);
                        self.next += 1;
                        issued += 1;
                        in_flight.push(change(self.objects.clone(), name));
                    }
                }
                Some(outcome) = in_flight.next() => record(&mut drive, outcome),
            }
        }
        drive.window_us.1 = now_us();
        while let Some(outcome) = in_flight.next().await {
            record(&mut drive, outcome);
        }
        drive.changes.sort_by_key(|change| change.sent_us);
        drive
    }
}

fn record(drive: &mut Drive, outcome: Result<Change>) {
    match outcome {
        Ok(change) => drive.changes.push(change),
        Err(_) => drive.failed += 1,
    }
}

/// Stamps `name` with the time now.
async fn change(objects: ResourceClient<ConfigMap>, name: String) -> Result<Change> {
    let sent_us = now_us();
    let patch = json!({"metadata": {"annotations": {SENT_AT: sent_us.to_string()}}});
    objects
        .patch(&name, &Patch::Merge(patch), &PatchOptions::default())
        .await?;
    Ok(Change { name, sent_us })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::config_map;

    #[tokio::test]
    async fn drive_stamps_each_object_in_turn_at_the_offered_rate() -> Result<()> {
        let server = kubegen_testserver::TestServer::start().await;
        let client = server.client();
        let namespace = "default";
        for index in 0..3 {
            ResourceClient::<ConfigMap>::namespaced(client.clone(), namespace)
                .create(&config_map(namespace, index), &Default::default())
                .await?;
        }
        let mut driver = Driver::new(client.clone(), namespace, 3);
        let drive = driver.drive(100.0, Duration::from_millis(200)).await;
        assert_eq!(drive.failed, 0);
        // 100/s owes fewer than 20 changes before the 200 ms deadline, however late the ticks.
        assert!(
            (1..=19).contains(&drive.changes.len()),
            "{}",
            drive.changes.len()
        );
        // Round robin: the three objects were changed equally often, give or take one.
        let counts: Vec<usize> = (0..3)
            .map(|index| {
                let name = config_map_name(index);
                drive.changes.iter().filter(|c| c.name == name).count()
            })
            .collect();
        let (least, most) = (counts.iter().min(), counts.iter().max());
        assert!(
            most.zip(least).is_some_and(|(m, l)| m - l <= 1),
            "{counts:?}"
        );
        let stored = ResourceClient::<ConfigMap>::namespaced(client, namespace)
            .get("cm-000001", &Default::default())
            .await?;
        let stamp = stored
            .metadata
            .annotations
            .and_then(|annotations| annotations.get(SENT_AT).cloned());
        let last = drive.changes.iter().rev().find(|c| c.name == "cm-000001");
        assert_eq!(stamp, last.map(|c| c.sent_us.to_string()));
        Ok(())
    }
}
