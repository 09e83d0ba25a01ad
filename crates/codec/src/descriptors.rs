//! The protobuf descriptors of every vendored Kubernetes message, below everything that reads
//! them: the kind lookup (`schema`), the decode plans (`plan`) and the JSON encoders.
//!
//! The descriptor set is compiled from the vendored upstream `generated.proto` files by the tool
//! `hack/proto-descriptors` (see `proto/README.md`), committed as `descriptors/kubernetes.fds`,
//! embedded here and decoded once, on first use.

use std::sync::LazyLock;

use prost_reflect::DescriptorPool;

static POOL: LazyLock<DescriptorPool> = LazyLock::new(|| {
    let bytes = include_bytes!("../descriptors/kubernetes.fds");
    // protox encoded these bytes and hack/verify-codegen.sh checks them against `proto/`; a decode
    // failure means the committed file is corrupt, which the first codec test reports.
    DescriptorPool::decode(bytes.as_slice())
        .expect("descriptors/kubernetes.fds is a valid descriptor set")
});

/// The descriptor pool holding every vendored Kubernetes message.
pub(crate) fn pool() -> &'static DescriptorPool {
    &POOL
}
