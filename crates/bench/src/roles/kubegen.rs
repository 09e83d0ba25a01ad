//! The kubegen client: `SharedIndexInformer` over `kubegen-client`, until `has_synced()`.

use anyhow::{Result, bail};

use super::{BenchObject, Job};
use crate::measure::Cost;

/// Runs an informer until it has synced (wired once kubegen-cache's informer lands).
pub async fn sync<K: BenchObject>(job: &Job) -> Result<Cost> {
    bail!(
        "kubegen informer not wired yet ({} x {})",
        job.expect,
        std::any::type_name::<K>()
    )
}
