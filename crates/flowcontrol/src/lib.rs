//! `kubegen-flowcontrol`: the one token bucket of kubegen, kubegen's counterpart of client-go
//! `util/flowcontrol` (`NewTokenBucketRateLimiter`).
//!
//! # Where it sits
//! ```text
//! kubegen-client    (Config::rate_limit: QPS/burst of every request)   ─┐
//!                                                                        ├─> kubegen-flowcontrol
//! kubegen-workqueue (TokenBucket limiter: overall retry rate of a queue) ─┘
//! ```
//! Both used to carry their own bucket with different maths and different handling of bad
//! parameters. The bucket lives here, below both, so the client does not depend on the workqueue
//! (nor the other way round) and both get the same maths and the same validation.
//!
//! | client-go (`util/flowcontrol`)                 | here                         | file              |
//! |------------------------------------------------|------------------------------|-------------------|
//! | `NewTokenBucketRateLimiter`, `Accept`, `Wait`  | [`TokenBucket`]              | `token_bucket.rs` |
//! | `golang.org/x/time/rate.Limiter.Reserve`       | [`TokenBucket::reserve`]     | `token_bucket.rs` |
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `token_bucket`

mod token_bucket;

pub use token_bucket::{InvalidRate, TokenBucket};
