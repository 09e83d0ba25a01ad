//! The kube-rs baseline: `kube_runtime::reflector` over `watcher`, paged 500, until `InitDone`.
//!
//! This is how a kube-rs controller fills its cache, with kube-rs's own client (hyper + rustls with
//! ring; the server speaks plain HTTP here, so TLS costs nothing on either side).

use anyhow::{Context, Result, bail};
use futures_util::StreamExt;
use kube::runtime::watcher::{self, Event};
use kube::runtime::{WatchStreamExt, reflector};
use kube::{Api, ResourceExt};

use super::{BenchObject, Job, Role, check_count};
use crate::measure::{Cost, Snapshot, reset_peak_rss};

/// Runs a reflector until its store holds the initial list.
pub async fn sync<K: BenchObject>(job: &Job) -> Result<Cost> {
    let uri = job.url.parse().context("parsing server URL")?;
    let client = kube::Client::try_from(kube::Config::new(uri)).context("building kube client")?;
    let api: Api<K> = Api::namespaced(client, &job.namespace);
    let config = watcher::Config::default().page_size(500);

    reset_peak_rss();
    let start = Snapshot::take();
    let (reader, writer) = reflector::store::<K>();
    let strip = job.strip_managed_fields;
    let events = watcher::watcher(api, config).modify(move |object| {
        if strip {
            object.managed_fields_mut().clear();
        }
    });
    let mut stream = Box::pin(reflector::reflector(writer, events));
    loop {
        match stream.next().await {
            Some(Ok(Event::InitDone)) => break,
            Some(Ok(_)) => {}
            Some(Err(error)) => bail!("kube-rs watcher failed: {error}"),
            None => bail!("kube-rs watcher ended before InitDone"),
        }
    }
    let end = Snapshot::take();
    check_count(Role::KubeRs, reader.state().len(), job.expect)?;
    drop(stream);
    Ok(Cost::between(&start, &end, job.expect as u64))
}
