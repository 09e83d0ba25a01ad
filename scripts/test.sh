#!/usr/bin/env bash
# Runs every test of the workspace: unit, integration (against the in-process test server),
# doc tests, the e2e suite (which skips with a printed reason unless KUBEGEN_E2E_KUBECONFIG is set),
# and a real kubectl against `image-police --embedded` (scripts/kubectl-smoke.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-tools.sh
cargo nextest run --workspace --all-features --no-fail-fast
cargo test --workspace --all-features --doc
scripts/kubectl-smoke.sh
