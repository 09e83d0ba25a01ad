#!/usr/bin/env bash
# fleet-restart-check.sh: issue 36's "a member killed and restarted", on real API servers.
#
# Runs `fleet-policy` with a hub on the test server over two real members (v1.36 + kcm, and
# 1.15), stops the second member's API server (and its etcd) with its realservers script, checks
# that the member shows unreachable while the first is still enforced, starts it again, and
# checks that it turns ready and is enforced again with no manual step. The test is
# `real_member_killed_and_restarted_on_cluster` in examples/tests/examples/fleet.rs.
#
# It takes a shared API server away for a few seconds: run it only when nothing else uses the
# real servers. It says so and waits for `--yes`. Whatever happens, it leaves the server running.
#
#   hack/fleet-restart-check.sh --yes
#
# Environment (defaults in brackets):
#   KUBEGEN_FLEET_MEMBERS  two kubeconfigs, comma-separated; the second is restarted
#                          [/opt/k8s136/admin.kubeconfig,/opt/realk8s/admin.kubeconfig]
#   KUBEGEN_FLEET_RESTART  the second member's `stop|start|status` script
#                          [/work/shared/realservers/kube-apiserver-1.15.sh]
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
export KUBEGEN_FLEET_MEMBERS=${KUBEGEN_FLEET_MEMBERS:-/opt/k8s136/admin.kubeconfig,/opt/realk8s/admin.kubeconfig}
export KUBEGEN_FLEET_RESTART=${KUBEGEN_FLEET_RESTART:-/work/shared/realservers/kube-apiserver-1.15.sh}

echo "fleet-restart-check: members $KUBEGEN_FLEET_MEMBERS"
echo "fleet-restart-check: this STOPS and restarts the API server of $KUBEGEN_FLEET_RESTART"
if [ "${1:-}" != "--yes" ]; then
  echo "fleet-restart-check: run it only when nothing else uses that server; pass --yes to go ahead" >&2
  exit 2
fi
[ -x "$KUBEGEN_FLEET_RESTART" ] || { echo "no executable $KUBEGEN_FLEET_RESTART" >&2; exit 2; }

# Never leave the shared server down, whatever the test did.
ensure_running() {
  if ! "$KUBEGEN_FLEET_RESTART" status | grep -q "kube-apiserver: running"; then
    echo "fleet-restart-check: starting $KUBEGEN_FLEET_RESTART again" >&2
    setsid -w "$KUBEGEN_FLEET_RESTART" start
  fi
}
trap ensure_running EXIT

cd "$ROOT"
nice -n 19 cargo nextest run -p kubegen-examples --all-features --no-fail-fast \
  --run-ignored only -E 'test(real_member_killed_and_restarted_on_cluster)' --no-capture
