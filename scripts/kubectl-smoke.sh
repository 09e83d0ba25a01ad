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
# namespace (how the expectations below were checked against a real API server). A cluster without
# nodes runs no Pods: add SMOKE_SIMULATE_NODES=1 to run kubegen's node simulator against it
# (`kubegen-testserver nodes`: a Node, a default-scheduler and a kubelet), so the Pod, exec,
# logs, port-forward and workload operations run there too. Use it only on a cluster without its
# own scheduler, whose controller-manager runs node-lifecycle-controller (it lifts the
# `node.kubernetes.io/not-ready` taint the API server puts on a new Node).
set -euo pipefail
cd "$(dirname "$0")/.."

# scripts/install-tools.sh puts kubectl into the project's own virtual environment.
KUBECTL=${KUBECTL:-$PWD/.tools/venv/bin/kubectl}
[ -x "$KUBECTL" ] || { echo "kubectl-smoke: no kubectl at $KUBECTL; run scripts/install-tools.sh" >&2; exit 1; }

work=$(mktemp -d)
log=$work/image-police.log
server_pid=
nodes_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  stop_simulated_nodes
  rm -rf "$work"
}
trap cleanup EXIT

# Builds image-police, starts it with --embedded and points KUBECONFIG at the server it prints.
start_embedded() {
  cargo build --quiet -p kubegen-controller --bin image-police --all-features
  local target_dir kubeconfig=
  target_dir=$(target_directory)
  # From a directory without deploy/: the binary carries its manifests, as an installed one must.
  (cd "$work" && exec "$target_dir/debug/image-police" --embedded --metrics-bind-address 127.0.0.1:0 \
    --health-probe-bind-address 127.0.0.1:0) >"$log" 2>&1 &
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

# The directory cargo builds into.
target_directory() {
  cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])'
}

# Starts kubegen's node simulator against $SMOKE_KUBECONFIG: one Node, named ${node_prefix}0.
# An API server reaches a kubelet at the Node's Hostname address first
# (`--kubelet-preferred-address-types`), which is its name: so the name is a loopback address
# (127.x.y.10, one per run) that the simulated kubelet serves on.
start_simulated_nodes() {
  cargo build --quiet -p kubegen-testserver --features cli --bin kubegen-testserver
  "$(target_directory)/debug/kubegen-testserver" nodes --kubeconfig "$SMOKE_KUBECONFIG" --count 1 \
    --name-prefix "$node_prefix" --kubelet-address "${node_prefix}0" >"$work/nodes.log" 2>&1 &
  nodes_pid=$!
  for _ in $(seq 100); do
    "$KUBECTL" get node "${node_prefix}0" >/dev/null 2>&1 && return 0
    kill -0 "$nodes_pid" 2>/dev/null || break
    sleep 0.3
  done
  cat "$work/nodes.log" >&2
  echo "kubectl-smoke: the simulated nodes did not register" >&2
  exit 1
}
# Stops the node simulator and deletes its Nodes (a real cluster keeps them otherwise).
stop_simulated_nodes() {
  [ -n "$nodes_pid" ] || return 0
  kill "$nodes_pid" 2>/dev/null && wait "$nodes_pid" 2>/dev/null
  nodes_pid=
  "$KUBECTL" delete node "${node_prefix}0" --wait=false >/dev/null
}

# pods_run: whether Pods are scheduled and run where the operations go (simulated Nodes).
if [ -n "${SMOKE_KUBECONFIG:-}" ]; then
  export KUBECONFIG=$SMOKE_KUBECONFIG
  "$KUBECTL" apply -f deploy/crd.yaml >/dev/null
  ns=smoke-$$
  node_prefix=127.$(($$ / 250 % 250 + 1)).$(($$ % 250)).1
  pods_run=0
  if [ "${SMOKE_SIMULATE_NODES:-0}" = 1 ]; then
    start_simulated_nodes
    pods_run=1
  fi
else
  start_embedded
  ns=smoke
  node_prefix=nodesim-
  pods_run=1
fi

# Prints ok when the Pods labelled $1 are one per Node, each bound to the Node its
# `matchFields` node affinity names.
daemon_pods_pinned() {
  local nodes pods
  nodes=$(k get nodes -o 'jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}' | sort)
  pods=$(k -n "$ns" get pods -l "$1" -o 'jsonpath={range .items[*]}{.spec.nodeName}={.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values[0]}{"\n"}{end}' | sort)
  if [ "$(echo "$pods" | cut -d= -f1)" = "$nodes" ] && ! echo "$pods" | awk -F= '$1 != $2 {bad=1} END {exit !bad}'; then
    echo ok
  else
    echo "nodes: $nodes; pods: $pods"
  fi
}

# Prints how many ControllerRevisions the StatefulSet $1 has.
count_revisions() {
  k -n "$ns" get controllerrevisions -o 'jsonpath={range .items[*]}{.metadata.ownerReferences[0].name}{"\n"}{end}' | grep -c "^$1\$"
}

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

# A Pod's streams through the API server to the (simulated) kubelet.
exec_stdin() { echo "piped through" | k -n "$ns" exec -i talk -- cat; }
exec_exit_code() {
  local rc=0
  k -n "$ns" exec talk -- sh -c 'echo to stderr >&2; exit 3' || rc=$?
  echo "exit=$rc"
}
attach_stdin() { echo "typed" | k -n "$ns" attach -i talk; }
# kubectl's SPDY path (the one before WebSockets, and its fallback when a WebSocket is refused).
spdy() { KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false KUBECTL_PORT_FORWARD_WEBSOCKETS=false "$@"; }
# Forwards a free local port to port 9000 of Pod talk with kubectl port-forward and sends a line
# through it with bash's /dev/tcp: the simulated Pod's echo responder sends it back.
port_forward_round_trip() {
  local out=$work/port-forward.out port= line=
  k -n "$ns" port-forward pod/talk :9000 >"$out" 2>&1 &
  local forwarder=$!
  for _ in $(seq 100); do
    port=$(sed -n 's/^Forwarding from 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$out" | head -n 1)
    [ -n "$port" ] && break
    kill -0 "$forwarder" 2>/dev/null || break
    sleep 0.1
  done
  if [ -n "$port" ]; then
    exec 3<>"/dev/tcp/127.0.0.1/$port"
    echo "round trip through port $port" >&3
    read -r -t 10 line <&3 || true
    exec 3<&-
  fi
  kill "$forwarder" 2>/dev/null || true
  wait "$forwarder" 2>/dev/null || true
  [ -n "$line" ] || { cat "$out"; return 1; }
  echo "$line"
}
# Creates a suspended Job $1 and a Pod $1 it owns: the simulated kubelet runs a Job's Pod to
# completion, and a suspended Job makes no Pods of its own.
finishing_pod() {
  k -n "$ns" create -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: $1}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{name: $1, image: "nginx:1.27", command: ["true"]}]
YAML
  local uid
  uid=$(k -n "$ns" get job "$1" -o 'jsonpath={.metadata.uid}')
  k -n "$ns" create -f - <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: $1, uid: $uid}]
spec:
  restartPolicy: Never
  containers: [{name: $1, image: "nginx:1.27", command: ["true"]}]
YAML
}

# Polls (up to 30 s) until the namespace's `default` ServiceAccount exists.
wait_for_default_serviceaccount() {
  for _ in $(seq 60); do
    k -n "$ns" get serviceaccount default >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  k -n "$ns" get serviceaccount default
}
# Polls (up to 30 s) until Deployment $1 owns $2 ReplicaSets.
wait_for_replicasets() {
  local count=
  for _ in $(seq 60); do
    count=$(k -n "$ns" get replicasets -l "app=$1" -o name | wc -l)
    [ "$count" -eq "$2" ] && return 0
    sleep 0.5
  done
  echo "deployment $1 has $count ReplicaSets, not $2"
  return 1
}
# Fails when kubectl prints "No resources found" (so `refuse` can require it) or errors.
kget_any() {
  local out
  out=$(k get "$@" 2>&1) || { echo "$out"; return 1; }
  echo "$out"
  ! grep -q 'No resources found' <<<"$out"
}
# Creates ConfigMap $2 with an ownerReference to ConfigMap $1.
create_dependent() {
  local uid
  uid=$(k -n "$ns" get configmap "$1" -o 'jsonpath={.metadata.uid}')
  k -n "$ns" create -f - <<YAML
apiVersion: v1
kind: ConfigMap
metadata:
  name: $2
  ownerReferences:
    - {apiVersion: v1, kind: ConfigMap, name: $1, uid: $uid}
YAML
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
# What a controller-manager does (the real kube-controller-manager next to a real server, the
# in-process one inside the embedded server): ServiceAccounts, rollouts, garbage collection and
# namespace lifecycle.
check "auth whoami (SelfSubjectReview)" '^Username ' -- k auth whoami
check "a new namespace gets its default ServiceAccount" '' -- wait_for_default_serviceaccount
# (a real server issues a JWT, the test server an opaque token)
check "create token for it" '^[A-Za-z0-9._-]{20,}$' -- k -n "$ns" create token default
check "create a Deployment to roll out" 'deployment.apps/roll created' -- k -n "$ns" create deployment roll --image=nginx:1.27
check "it gets a ReplicaSet" '' -- wait_for_replicasets roll 1
if [ "$pods_run" = 1 ]; then
  # The simulated Nodes (kubegen-nodesim) schedule and run the Pods.
  check "rollout status finishes on the simulated nodes" 'successfully rolled out' -- k -n "$ns" rollout status deployment/roll --timeout=60s
  check "its Pod runs on a simulated node" "^Running $node_prefix[0-9]+\$" -- k -n "$ns" get pods -l app=roll -o 'jsonpath={range .items[*]}{.status.phase} {.spec.nodeName}{"\n"}{end}'
  # Logs, exec, attach and port-forward reach the simulated kubelet through the API server.
  check "run a Pod" 'pod/talk created' -- k -n "$ns" run talk --image=nginx:1.27 --restart=Always -- sleep 3600
  check "wait --for=condition=Ready" 'pod/talk condition met' -- k -n "$ns" wait --for=condition=Ready pod/talk --timeout=60s
  check "logs" "^nodesim: container talk of pod $ns/talk started$" -- k -n "$ns" logs talk
  check "logs --tail" '^nodesim: command \[sleep 3600\]$' -- k -n "$ns" logs talk --tail=1
  check "exec" '^hello$' -- k -n "$ns" exec talk -- echo hello
  check "exec -i with stdin" '^piped through$' -- exec_stdin
  check "exec exit code and stderr" '^exit=3$' -- exec_exit_code
  check "exec prints the exit code" 'command terminated with exit code 3' -- exec_exit_code
  refuse "exec of a command outside the simulated set" 'executable file not found in \$PATH' -- k -n "$ns" exec talk -- rm -rf /
  check "attach -i" '^typed$' -- attach_stdin
  # The same over SPDY/3.1, as kubectl speaks it with the WebSocket features off.
  check "exec over SPDY" '^hello$' -- spdy k -n "$ns" exec talk -- echo hello
  check "exec -i over SPDY" '^piped through$' -- spdy exec_stdin
  check "exec exit code over SPDY" '^exit=3$' -- spdy exec_exit_code
  check "attach -i over SPDY" '^typed$' -- spdy attach_stdin
  # port-forward: the SPDY tunnel in a WebSocket (kubectl's default), then plain SPDY.
  check "port-forward (WebSocket tunnel)" '^round trip through port [0-9]+$' -- port_forward_round_trip
  check "port-forward over SPDY" '^round trip through port [0-9]+$' -- spdy port_forward_round_trip
  check "a Pod that runs to completion (a suspended Job's)" 'pod/finish created' -- finishing_pod finish
  check "it succeeds" 'condition met' -- k -n "$ns" wait --for=jsonpath='{.status.phase}'=Succeeded pod/finish --timeout=60s
  check "logs -f of a finished container ends" '^nodesim: container finish exited with code 0$' -- k -n "$ns" logs -f finish
  refuse "logs of an unknown container" 'container zz is not valid for pod talk' -- k -n "$ns" logs talk -c zz
fi
# Workloads beyond Deployments, on the simulated Nodes (the StatefulSet controller). v1.36
# defaults `rollingUpdate.partition: 0`, so kubectl reports a "partitioned" roll out.
if [ "$pods_run" = 1 ]; then
  cat >"$work/statefulset.yaml" <<'YAML'
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 2
  serviceName: db
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: db
        image: nginx:1.27
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: [ReadWriteOnce]
      resources:
        requests: {storage: 1Gi}
YAML
  check "apply a StatefulSet without an updateStrategy" 'statefulset.apps/db created' -- k -n "$ns" apply -f "$work/statefulset.yaml"
  check "StatefulSet rollout status finishes" 'partitioned roll out complete: 2 new pods have been updated' -- k -n "$ns" rollout status statefulset/db --timeout=60s
  check "its Pods have stable names" '^db-0 db-1$' -- k -n "$ns" get pods -l app=db -o 'jsonpath={.items[*].metadata.name}'
  check "its claims are created, Pending without a provisioner" '^data-db-0=Pending data-db-1=Pending $' -- k -n "$ns" get pvc -o 'jsonpath={range .items[*]}{.metadata.name}={.status.phase} {end}'
  check "set image on the StatefulSet" 'statefulset.apps/db image updated' -- k -n "$ns" set image statefulset/db db=nginx:1.27.3
  check "the StatefulSet rolls onto the new revision" 'partitioned roll out complete: 2 new pods have been updated' -- k -n "$ns" rollout status statefulset/db --timeout=60s
  check "it kept two ControllerRevisions" '^2$' -- count_revisions db
  # DaemonSets (the daemonset controller): one Pod on every simulated Node, rolled Node by Node.
  check "create a DaemonSet" 'daemonset.apps/agent created' -- k -n "$ns" create -f - <<'YAML'
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      containers:
      - name: agent
        image: nginx:1.27
YAML
  check "DaemonSet rollout status finishes" 'daemon set "agent" successfully rolled out' -- k -n "$ns" rollout status daemonset/agent --timeout=60s
  check "one Pod per Node, pinned there by matchFields" '^ok$' -- daemon_pods_pinned app=agent
  check "set image on the DaemonSet" 'daemonset.apps/agent image updated' -- k -n "$ns" set image daemonset/agent agent=nginx:1.27.3
  check "the DaemonSet rolls onto the new template" 'daemon set "agent" successfully rolled out' -- k -n "$ns" rollout status daemonset/agent --timeout=60s
  check "every Node runs a Pod of template generation 2" '^ok$' -- daemon_pods_pinned app=agent,pod-template-generation=2
  # Jobs (the job controller): its Pod runs to completion on a simulated Node.
  check "create job" 'job.batch/pi created' -- k -n "$ns" create job pi --image=nginx:1.27 -- true
  check "wait for the Job to complete" 'job.batch/pi condition met' -- k -n "$ns" wait --for=condition=complete job/pi --timeout=60s
  check "it counted one success and no active Pod" '^succeeded=1 active= ready=0$' -- k -n "$ns" get job pi -o 'jsonpath=succeeded={.status.succeeded} active={.status.active} ready={.status.ready}'
  check "its Pod carries the generated labels and no finalizer" '^pi-[a-z0-9]{5} job-name=pi finalizers=$' -- k -n "$ns" get pods -l batch.kubernetes.io/job-name=pi -o 'jsonpath={.items[0].metadata.name} job-name={.items[0].metadata.labels.job-name} finalizers={.items[0].metadata.finalizers}'
fi
check "rollout history shows revision 1" '^1 +<none>' -- k -n "$ns" rollout history deployment/roll
check "set image" 'deployment.apps/roll image updated' -- k -n "$ns" set image deployment/roll nginx=nginx:1.27.3
check "a second ReplicaSet rolls out" '' -- wait_for_replicasets roll 2
check "rollout history shows revision 2" '^2 +<none>' -- k -n "$ns" rollout history deployment/roll
check "delete --cascade=orphan" 'deployment.apps "roll" deleted' -- k -n "$ns" delete deployment roll --cascade=orphan --timeout=60s
check "the orphans stay, without their owner" '^roll-[a-z0-9]+=$' -- k -n "$ns" get replicasets -l app=roll -o 'jsonpath={range .items[*]}{.metadata.name}={.metadata.ownerReferences}{"\n"}{end}'
check "delete --cascade=foreground waits for the dependents" 'deleted' -- k -n "$ns" delete replicasets -l app=roll --cascade=foreground --timeout=60s
refuse "the dependents are gone" 'No resources found' -- kget_any -n "$ns" pods -l app=roll
check "create an owner ConfigMap" 'configmap/owner created' -- k -n "$ns" create configmap owner
check "create a ConfigMap it owns" 'configmap/dependent created' -- create_dependent owner dependent
check "delete the owner" 'configmap "owner" deleted' -- k -n "$ns" delete configmap owner
check "the garbage collector deletes the dependent" '' -- k -n "$ns" wait --for=delete configmap/dependent --timeout=60s
check "create a namespace with content" "namespace/$ns-doomed created" -- k create namespace "$ns-doomed"
check "content in it" 'configmap/content created' -- k -n "$ns-doomed" create configmap content
check "delete the namespace: it finishes" "namespace \"$ns-doomed\" deleted" -- k delete namespace "$ns-doomed" --timeout=60s
refuse "the namespace is gone" 'NotFound|not found' -- k get namespace "$ns-doomed"
if [ -n "$server_pid" ]; then
  check "the controller ran against the same server" 'cache-forbidden' -- k -n police-demo get events
  refuse "the admission webhook refuses a forbidden image" "admission webhook \"deployments.image-police.police.example.com\" denied the request: image-police: Deployment runs images not allowed in namespace \"$ns\" by WhiteLists \\[\"allowed\"\\]: image \"redis:7.4\"" -- k -n "$ns" create deployment forbidden --image=redis:7.4
  # The controller is the safety net for what was admitted while the webhook was away.
  check "without the webhook configuration" 'deleted' -- k delete validatingwebhookconfiguration image-police
  check "a forbidden image is created" 'deployment.apps/forbidden created' -- k -n "$ns" create deployment forbidden --image=redis:7.4
  # (kubectl wait prints nothing when the object is already gone by the time it looks)
  check "the controller deletes it" '' -- k -n "$ns" wait --for=delete deployment/forbidden --timeout=60s
  refuse "it stays deleted" 'NotFound|not found' -- k -n "$ns" get deployment forbidden
else
  k delete namespace "$ns" --wait=false >/dev/null
fi

# The kubegen-testserver binary as a local cluster (crates/testserver/README.md), restarted over
# its data directory.
if [ -z "${SMOKE_KUBECONFIG:-}" ]; then
  cargo build --quiet -p kubegen-testserver --features cli --bin kubegen-testserver
  target_dir=$(target_directory)
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  # Starts the binary in the background (not in a `check`: its subshell would lose the pid).
  local_cluster() {
    rm -f "$work/local.url"
    "$target_dir/debug/kubegen-testserver" --tls --port "$port" --data-dir "$work/cluster" \
      --preload deploy/crd.yaml --kubeconfig-out "$work/local.kubeconfig" >"$work/local.url" 2>"$work/local.log" &
    server_pid=$!
    for _ in $(seq 100); do [ -s "$work/local.url" ] && return 0; sleep 0.1; done
    cat "$work/local.log" >&2
    fail "kubegen-testserver did not start"
  }
  kill "$server_pid" && wait "$server_pid" 2>/dev/null || true
  local_cluster
  export KUBECONFIG=$work/local.kubeconfig
  check "kubegen-testserver serves kubectl (--tls --data-dir --preload)" 'Server Version' -- k version
  check "the preloaded CRDs are served" '^whitelists\.police\.example\.com ' -- k get crd
  check "local cluster: create namespace" 'namespace/demo created' -- k create namespace demo
  check "local cluster: create deployment" 'deployment.apps/web created' -- k -n demo create deployment web --image=nginx:1.27
  check "local cluster: auth whoami" '^Username +kubegen-admin' -- k auth whoami
  kill "$server_pid"
  if wait "$server_pid"; then
    passed=$((passed + 1)); printf 'ok   %s\n' "local cluster: stops on SIGTERM"
  else
    fail "local cluster: exit status $? after SIGTERM"
  fi
  local_cluster
  check "local cluster: the deployment survived with the old kubeconfig" '^web ' -- k -n demo get deployment web --no-headers
  check "local cluster: delete namespace finishes" 'namespace "demo" deleted' -- k delete namespace demo --timeout=60s
fi

if [ "$failed" -gt 0 ]; then
  echo "kubectl-smoke: $failed operations FAILED, $passed passed" >&2
  exit 1
fi
echo "kubectl-smoke: $passed operations passed against ${SMOKE_KUBECONFIG:-image-police --embedded} ($("$KUBECTL" version --client | head -n 1))"
