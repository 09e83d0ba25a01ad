#!/usr/bin/env bash
# Runs every test of the workspace: unit, integration (against the in-process test server), the
# sharding chaos test at 10k objects, doc tests, a real kubectl against `image-police --embedded`
# (scripts/kubectl-smoke.sh), the
# tutorial docs/your-first-operator.md run step by step (scripts/tutorial.sh), and the
# e2e suites of image-police and the examples (their real-cluster variants are ignored, so counted as skipped, unless
# KUBEGEN_E2E_KUBECONFIG is set; then this script runs them).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-tools.sh
cargo nextest run --workspace --all-features --no-fail-fast
# Ignored in the run above because it takes minutes: issue 25's chaos test at its full size.
echo "== sharding at scale: 10k objects while replicas are killed and added at random"
cargo nextest run --workspace --all-features --run-ignored only --no-capture \
  -E 'package(kubegen-sharding) & test(=ten_thousand_objects_under_chaos)'
cargo test --workspace --all-features --doc
scripts/kubectl-smoke.sh
scripts/tutorial.sh
if [ -n "${KUBEGEN_E2E_KUBECONFIG:-}" ]; then
  echo "== e2e against the cluster in $KUBEGEN_E2E_KUBECONFIG"
  # The test server's own twins compare its answers with the cluster's; those of the audit log
  # need the cluster's log too (below).
  cargo nextest run -p kubegen-controller -p kubegen-client -p kubegen-runtime -p kubegen-sharding -p kubegen-examples -p kubegen-controller-manager -p kubegen-generated-tests -p kubegen-cache -p kubegen-nodesim -p kubegen-testserver --all-features --run-ignored only \
    -E 'test(/_on_cluster$/) - (package(kubegen-testserver) & test(/^audit::/))'
  # The audit log's twins also read that cluster's audit log (the shared v1.36:
  # /opt/k8s136/audit/audit.log, written under crates/testserver/tests/api/fixtures/audit-policy.yaml).
  if [ -n "${KUBEGEN_E2E_AUDIT_LOG:-}" ]; then
    cargo nextest run -p kubegen-testserver --all-features --run-ignored only -E 'test(/^audit::.*_on_cluster$/)'
  else
    echo "== the audit log against a real cluster: not run (set KUBEGEN_E2E_AUDIT_LOG to its API server's audit log)"
  fi
else
  echo "== e2e against a real cluster: skipped (set KUBEGEN_E2E_KUBECONFIG to a kubeconfig to run it)"
fi
