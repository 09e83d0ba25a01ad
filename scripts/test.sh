#!/usr/bin/env bash
# Runs every test of the workspace: unit, integration (against the in-process test server),
# doc tests, and the e2e suite (which skips with a printed reason unless KUBEGEN_E2E_KUBECONFIG is set).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo nextest run --workspace --all-features --no-fail-fast
cargo test --workspace --all-features --doc
