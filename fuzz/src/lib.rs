//! kubegen-fuzz: property-based fuzzing of the parsers that read bytes from outside the process.
//!
//! # Why proptest and not (only) cargo-fuzz
//! cargo-fuzz needs a nightly toolchain and runs unbounded; these targets must also run in CI on
//! stable, bounded and reproducible. So each target is a proptest in `tests/` that
//! - generates *valid* inputs, mangles how they arrive (chunk boundaries anywhere, truncation,
//!   byte flips) and asserts exact outcomes (decoded equals encoded; errors, never panics), and
//! - throws arbitrary bytes at the parser and asserts only "no panic, no hang".
//!
//! CI runs the default 256 cases per property. A long local run: `PROPTEST_CASES=200000
//! cargo nextest run --release -p kubegen-fuzz` (see `docs/performance.md` for the last run).
//!
//! Targets, one file each in `tests/fuzz/`: the watch-stream decoder and the streaming list
//! decoder (`stream_decoders.rs`, through `ResourceClient::watch`/`list` over a scripted
//! [`Transport`](kubegen_client::Transport)), kubegen-codec's protobuf list decoder and
//! watch-frame splitter (`protobuf_decoders.rs`), the kubeconfig parser (`kubeconfig.rs`,
//! `Kubeconfig::parse`), codegen's tag parser (`codegen_tags.rs`, through
//! `kubegen_codegen::generate` on a generated `apis/` tree), and the test server's HTTP surface
//! (`testserver_http.rs`).
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `chunked`

pub mod chunked;
