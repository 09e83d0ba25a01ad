#!/usr/bin/env bash
# kubectl against `image-police --embedded`: the operations a user does, each checked.
#
# README's first command promises that a person can drive the embedded API server with a real
# kubectl while the controller runs. This script keeps that promise honest: it starts the embedded
# server, runs every operation below with a current kubectl, and checks what each one printed.
# It fails on the first operation that errors or prints something unexpected, naming it.
#
# Needs the kubectl that scripts/install-tools.sh installs; KUBECTL=<path> picks another one.
# SMOKE_KUBECONFIG=<kubeconfig> runs the same operations against that cluster instead, in a new
# namespace (how the expectations below were checked against a real API server).
set -euo pipefail
cd "$(dirname "$0")/.."

# scripts/install-tools.sh puts kubectl into Python's scripts directory, which may not be on PATH.
KUBECTL=${KUBECTL:-$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')/kubectl}
[ -x "$KUBECTL" ] || { echo "kubectl-smoke: no kubectl at $KUBECTL; run scripts/install-tools.sh" >&2; exit 1; }

work=$(mktemp -d)
log=$work/image-police.log
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# Builds image-police, starts it with --embedded and points KUBECONFIG at the server it prints.
start_embedded() {
  cargo build --quiet -p kubegen-controller --bin image-police --all-features
  local target_dir kubeconfig=
  target_dir=$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
  "$target_dir/debug/image-police" --embedded --metrics-bind-address 127.0.0.1:0 --health-probe-bind-address 127.0.0.1:0 \
    >"$log" 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do
    kubeconfig=$(sed -n 's/^ *kubeconfig: //p' "$log" | head -n 1)
    [ -n "$kubeconfig" ] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$log" >&2; echo "kubectl-smoke: image-police exited" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "$kubeconfig" ] || { cat "$log" >&2; echo "kubectl-smoke: no kubeconfig printed" >&2; exit 1; }
  export KUBECONFIG=$kubeconfig
}

if [ -n "${SMOKE_KUBECONFIG:-}" ]; then
  export KUBECONFIG=$SMOKE_KUBECONFIG
  "$KUBECTL" apply -f deploy/crd.yaml >/dev/null
  ns=smoke-$$
else
  start_embedded
  ns=smoke
fi

passed=0 failed=0
# Reports a failed operation; stops at once unless SMOKE_KEEP_GOING=1 (then the exit code says it).
fail() {
  printf 'FAIL %s\n' "$1" >&2
  failed=$((failed + 1))
  [ "${SMOKE_KEEP_GOING:-0}" = 1 ] || exit 1
}
# check NAME PATTERN -- COMMAND...: runs COMMAND, which must succeed and print a line matching the
# extended regular expression PATTERN ("" accepts any output).
check() {
  local name=$1 pattern=$2
  shift 3
  local out
  if ! out=$("$@" 2>&1); then
    fail "$(printf '%s\n  $ %s\n%s' "$name" "$*" "$out")"
    return
  fi
  if [ -n "$pattern" ] && ! grep -Eq -- "$pattern" <<<"$out"; then
    fail "$(printf '%s: output does not match /%s/\n  $ %s\n%s' "$name" "$pattern" "$*" "$out")"
    return
  fi
  passed=$((passed + 1))
  printf 'ok   %s\n' "$name"
}
# refuse NAME PATTERN -- COMMAND...: COMMAND must fail and print a line matching PATTERN.
refuse() {
  local name=$1 pattern=$2
  shift 3
  local out
  if out=$("$@" 2>&1); then
    fail "$(printf '%s: succeeded but must fail\n  $ %s\n%s' "$name" "$*" "$out")"
    return
  fi
  if ! grep -Eq -- "$pattern" <<<"$out"; then
    fail "$(printf '%s: error does not match /%s/\n  $ %s\n%s' "$name" "$pattern" "$*" "$out")"
    return
  fi
  passed=$((passed + 1))
  printf 'ok   %s\n' "$name"
}

k() { "$KUBECTL" "$@"; }
# kubectl diff exits 1 when it found differences, >1 on errors.
kdiff() {
  local rc=0
  k diff "$@" || rc=$?
  [ "$rc" -le 1 ]
}
# Watches a Deployment while another kubectl changes it; the watch must print the change.
watch_change() {
  local name=$1
  timeout 10 "$KUBECTL" -n "$ns" get deployment "$name" -w --output-watch-events >"$work/watch.out" 2>&1 &
  local watcher=$!
  sleep 1
  k -n "$ns" label deployment "$name" watched=yes >/dev/null
  sleep 1
  kill "$watcher" 2>/dev/null || true
  wait "$watcher" 2>/dev/null || true
  cat "$work/watch.out"
}

cat >"$work/deployment.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx:1.27
YAML
sed 's/replicas: 1/replicas: 2/' "$work/deployment.yaml" >"$work/deployment-2.yaml"
sed 's/^spec:/spec:\n  notAField: 1/' "$work/deployment.yaml" >"$work/deployment-bad.yaml"
cat >"$work/applied.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata:
  name: applied
data:
  mode: strict
  level: "1"
YAML
sed 's/strict/lenient/' "$work/applied.yaml" >"$work/applied-2.yaml"
# image-police runs against the embedded server: the list must allow every image used below, or
# the controller deletes the Deployment mid-script (as it should).
cat >"$work/whitelist.yaml" <<'YAML'
apiVersion: police.example.com/v1beta1
kind: WhiteList
metadata:
  name: allowed
spec:
  images:
    - name: nginx
      tags: ["1.27", "1.27.3"]
YAML

check "version reaches the server" 'Server Version' -- k version
check "api-resources lists built-ins and CRDs" '^whitelists +.*police\.example\.com/v1beta1 +true +WhiteList' -- k api-resources
check "api-versions" '^police\.example\.com/v1beta1$' -- k api-versions
check "create namespace (protobuf body)" "namespace/$ns created" -- k create namespace "$ns"
check "apply with validation" 'deployment.apps/web created' -- k -n "$ns" apply -f "$work/deployment.yaml"
refuse "strict validation rejects an unknown field" 'unknown field "spec.notAField"' -- k -n "$ns" apply --validate=strict -f "$work/deployment-bad.yaml"
check "apply a custom resource" 'whitelist.police.example.com/allowed created' -- k -n "$ns" apply -f "$work/whitelist.yaml"
check "create deployment (protobuf body)" 'deployment.apps/other created' -- k -n "$ns" create deployment other --image=nginx:1.27
check "create configmap" 'configmap/settings created' -- k -n "$ns" create configmap settings --from-literal=mode=strict
check "create secret" 'secret/token created' -- k -n "$ns" create secret generic token --from-literal=key=s3cr3t
check "get deployments shows printer columns" '^NAME +READY +UP-TO-DATE +AVAILABLE +AGE' -- k -n "$ns" get deployments
check "get -o wide adds columns" 'CONTAINERS +IMAGES +SELECTOR' -- k -n "$ns" get deployments -o wide
check "get configmap DATA column" '^settings +1 ' -- k -n "$ns" get configmap settings
check "get custom resources" '^allowed ' -- k -n "$ns" get whitelists
check "get -o yaml" '^  name: web$' -- k -n "$ns" get deployment web -o yaml
check "get -o jsonpath" '^nginx:1\.27$' -- k -n "$ns" get deployment web -o 'jsonpath={.spec.template.spec.containers[0].image}'
check "get by label selector" '^web ' -- k -n "$ns" get deployments -l app=web
check "label" 'deployment.apps/web labeled' -- k -n "$ns" label deployment web tier=frontend
check "annotate" 'deployment.apps/web annotated' -- k -n "$ns" annotate deployment web owner=smoke
check "label is stored" '^frontend$' -- k -n "$ns" get deployment web -o 'jsonpath={.metadata.labels.tier}'
check "patch --type=strategic" 'deployment.apps/web patched' -- k -n "$ns" patch deployment web -p '{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27.3"}]}}}}'
check "patch --type=merge" 'deployment.apps/web patched' -- k -n "$ns" patch deployment web --type=merge -p '{"metadata":{"annotations":{"merged":"yes"}}}'
check "patch --type=json" 'deployment.apps/web patched' -- k -n "$ns" patch deployment web --type=json -p '[{"op":"replace","path":"/spec/replicas","value":2}]'
check "apply --server-side" 'configmap/applied serverside-applied' -- k -n "$ns" apply --server-side -f "$work/applied.yaml"
refuse "a second field manager conflicts" 'Apply failed with 1 conflict: conflict with "kubectl": \.data\.mode' -- k -n "$ns" apply --server-side --field-manager=other -f "$work/applied-2.yaml"
check "--force-conflicts takes the field" 'configmap/applied serverside-applied' -- k -n "$ns" apply --server-side --field-manager=other --force-conflicts -f "$work/applied-2.yaml"
check "both managers are recorded" '^kubectl other$' -- k -n "$ns" get configmap applied --show-managed-fields -o 'jsonpath={.metadata.managedFields[*].manager}'
check "strategic patch kept the container list merged" '^nginx:1\.27\.3$' -- k -n "$ns" get deployment web -o 'jsonpath={.spec.template.spec.containers[*].image}'
check "scale" 'deployment.apps/web scaled' -- k -n "$ns" scale deployment web --replicas=3
check "scale is stored" '^3$' -- k -n "$ns" get deployment web -o 'jsonpath={.spec.replicas}'
check "explain a built-in field" 'FIELD: *replicas' -- k explain deployment.spec.replicas
check "explain a custom resource" 'KIND: *WhiteList' -- k explain whitelist.spec
# plaintext-openapiv2 reads /openapi/v2 in gnostic protobuf (client-go's OpenAPISchema()).
check "explain from the protobuf v2 document" 'FIELD: *replicas <integer>' -- k explain deployment.spec.replicas --output plaintext-openapiv2
check "explain a custom resource from the protobuf v2 document" 'KIND: *WhiteList' -- k explain whitelist.spec --output plaintext-openapiv2
check "describe" '^Name: +web$' -- k -n "$ns" describe deployment web
check "diff shows a change" '^\+  replicas: 2' -- kdiff -n "$ns" -f "$work/deployment-2.yaml"
check "auth can-i" '^yes$' -- k auth can-i create deployments -n "$ns"
check "auth can-i --list" '^(\*\.\*|deployments\.apps) ' -- k auth can-i --list -n "$ns"
if [ -n "$server_pid" ]; then
  # The controller runs as its ServiceAccount under deploy/rbac.yaml: what it may and may not do.
  sa_kubeconfig=$(sed -n 's/^ *controller kubeconfig: //p' "$log" | head -n 1)
  check "auth can-i as the controller's ServiceAccount" '^yes$' -- k --kubeconfig "$sa_kubeconfig" auth can-i delete deployments -n "$ns"
  refuse "auth can-i denies what rbac.yaml does not grant" '^no$' -- k --kubeconfig "$sa_kubeconfig" auth can-i create pods -n "$ns"
  refuse "RBAC denies the ServiceAccount with the real message" "pods is forbidden: User \"system:serviceaccount:image-police:image-police\" cannot list resource \"pods\" in API group \"\" in the namespace \"$ns\"" -- k --kubeconfig "$sa_kubeconfig" -n "$ns" get pods
fi
check "get -w streams a change" '^MODIFIED +web ' -- watch_change web
check "delete --wait" 'deployment.apps "other" deleted' -- k -n "$ns" delete deployment other --wait=true
refuse "get a deleted object" 'NotFound|not found' -- k -n "$ns" get deployment other
if [ -n "$server_pid" ]; then
  check "the controller ran against the same server" 'cache-forbidden' -- k -n police-demo get events
  check "a forbidden image is created" 'deployment.apps/forbidden created' -- k -n "$ns" create deployment forbidden --image=redis:7.4
  # (kubectl wait prints nothing when the object is already gone by the time it looks)
  check "the controller deletes it" '' -- k -n "$ns" wait --for=delete deployment/forbidden --timeout=60s
  refuse "it stays deleted" 'NotFound|not found' -- k -n "$ns" get deployment forbidden
else
  k delete namespace "$ns" --wait=false >/dev/null
fi

if [ "$failed" -gt 0 ]; then
  echo "kubectl-smoke: $failed operations FAILED, $passed passed" >&2
  exit 1
fi
echo "kubectl-smoke: $passed operations passed against ${SMOKE_KUBECONFIG:-image-police --embedded} ($("$KUBECTL" version --client | head -n 1))"
