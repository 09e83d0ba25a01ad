//! The two baselines every client is compared with: the transfer alone, and the decode alone.

use anyhow::{Context, Result};
use kube_core::ObjectList;

use super::job::{BenchObject, Job, Role, check_count};
use crate::measure::{Cost, Snapshot, reset_peak_rss};

/// GETs every page and drops the bytes: what moving the data costs, with no decoding at all.
pub async fn raw(job: &Job) -> Result<Cost> {
    let client = job.raw_client().await?;
    reset_peak_rss();
    let start = Snapshot::take();
    let (_, bytes) = client
        .list_pages(&job.dataset.collection(&job.namespace), false)
        .await?;
    let end = Snapshot::take();
    eprintln!("raw: {bytes} bytes transferred");
    Ok(Cost::between(&start, &end, job.expect as u64))
}

/// Decodes the list pages into `K` with serde_json and keeps the items, as a cache would. The
/// pages are fetched before the clock starts, so only decoding and the decoded heap are measured.
pub async fn floor<K: BenchObject>(job: &Job) -> Result<Cost> {
    let client = job.raw_client().await?;
    let (pages, _) = client
        .list_pages(&job.dataset.collection(&job.namespace), true)
        .await?;
    reset_peak_rss();
    let start = Snapshot::take();
    let mut items: Vec<K> = Vec::with_capacity(job.expect);
    for page in &pages {
        let list: ObjectList<K> = serde_json::from_slice(page).context("decoding a list page")?;
        items.extend(list.items);
    }
    let end = Snapshot::take();
    check_count(Role::Floor, items.len(), job.expect)?;
    crate::measure::exit_with(&Cost::between(&start, &end, job.expect as u64))
}
