#!/usr/bin/env bash
# Runs docs/your-first-operator.md exactly as a reader would, in a new empty directory: every
# ```sh block is run in order (one shell, so `cd` and exports carry over), every block whose info
# string names a file (```rust file=hello-operator/src/main.rs) is written to that path first,
# and a ```sh run-until="<text>" block is started, watched until its output contains <text>,
# then stopped with Ctrl-C (SIGINT), as a reader stops a running controller. Blocks marked
# `no-run` (```sh no-run) and blocks in other languages without `file=` are only shown.
#
# The reader's project lives outside this checkout and reaches kubegen only through a git URL:
# KUBEGEN_GIT is a bare clone of this checkout (file://), KUBEGEN_REV its HEAD commit, so what is
# tested is the committed tree, exactly as a user fetches it. The generator is installed with
# `cargo install` into a throwaway root. Cargo builds into CARGO_TARGET_DIR (default: this
# checkout's target/), so third-party dependencies the workspace already built are reused.
#
# After the steps, the same project is built again with k8s-openapi's `earliest` instead of the
# tutorial's `latest` (the application picks the Kubernetes version; kubegen works with either),
# and `kubegen --check` confirms the committed generated code is what the generator writes.
# Last, `kubegen init` scaffolds a second project from the same git URL, which must generate,
# build without warnings and pass its own test.
# Part of scripts/test.sh, so of CI.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
doc="$root/docs/your-first-operator.md"
work="$(mktemp -d "${TMPDIR:-/tmp}/kubegen-tutorial.XXXXXX")"
trap 'rm -rf "$work"' EXIT
git clone --quiet --bare "$root" "$work/kubegen.git"
# HEAD may be detached (a CI checkout): make sure its commit is in the clone.
git -C "$work/kubegen.git" fetch --quiet "$root" "+HEAD:refs/heads/tutorial-head"
export KUBEGEN_GIT="file://$work/kubegen.git"
KUBEGEN_REV="$(git -C "$root" rev-parse HEAD)"
export KUBEGEN_REV
export CARGO_INSTALL_ROOT="$work/tools"
export PATH="$CARGO_INSTALL_ROOT/bin:$PATH"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
if [ -n "$(git -C "$root" status --porcelain -- . ':!target')" ]; then
  echo "== tutorial: note: uncommitted changes are not tested (the tutorial fetches $KUBEGEN_REV)"
fi

script="$work/tutorial-steps.sh"
{
  cat <<'PRELUDE'
set -euo pipefail
# run_until TEXT COMMAND: runs COMMAND in its own process group until its output shows TEXT
# (at most 10 minutes, including the build), then sends it Ctrl-C and waits for it to exit.
run_until() {
  local text=$1 command=$2 log
  log="$(mktemp)"
  setsid bash -c "$command" >"$log" 2>&1 &
  local pid=$!
  for _ in $(seq 600); do
    if grep -qF -- "$text" "$log"; then
      kill -INT -- "-$pid" 2>/dev/null || true
      wait "$pid" || true
      cat "$log"
      echo "== tutorial: saw \"$text\", stopped with Ctrl-C"
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      cat "$log"
      echo "== tutorial: the command ended before printing \"$text\"" >&2
      return 1
    fi
    sleep 1
  done
  kill -KILL -- "-$pid" 2>/dev/null || true
  cat "$log"
  echo "== tutorial: no \"$text\" within 10 minutes" >&2
  return 1
}
PRELUDE
  awk '
    function flush() {
      if (kind == "file") {
        printf "mkdir -p \"$(dirname %s)\"\ncat > %s <<'"'"'KUBEGEN_TUTORIAL_EOF'"'"'\n%sKUBEGEN_TUTORIAL_EOF\n", path, path, body
      } else if (kind == "sh") {
        printf "%s", body
      } else if (kind == "until") {
        printf "run_until %s '"'"'%s'"'"'\n", until, body_line
      }
    }
    /^```/ && kind != "" { flush(); kind = ""; body = ""; next }
    /^```/ && kind == "" {
      info = substr($0, 4)
      if (match(info, /file=[^ ]+/)) { kind = "file"; path = substr(info, RSTART + 5, RLENGTH - 5) }
      else if (match(info, /run-until="[^"]*"/)) { kind = "until"; until = substr(info, RSTART + 10, RLENGTH - 10); body_line = "" }
      else if (info ~ /no-run/) { kind = "skip" }
      else if (info ~ /^(sh|bash)( |$)/) { kind = "sh" }
      else { kind = "skip" }
      next
    }
    kind == "until" { body_line = body_line $0; next }
    kind != "" { body = body $0 "\n" }
  ' "$doc"
} >"$script"

echo "== tutorial: running the steps of docs/your-first-operator.md in $work"
cd "$work"
bash -x "$script" 2>&1 | tee "$work/steps.log"
project="$work/hello-operator"

echo "== tutorial: the generated code is what the generator writes"
(cd "$project" && kubegen --check)

echo "== tutorial: the same project with k8s-openapi's earliest instead of latest"
sed -i 's/features = \["latest"\]/features = ["earliest"]/' "$project/operator/Cargo.toml"
grep -q '"earliest"' "$project/operator/Cargo.toml"
(cd "$project" && cargo build -p hello-operator --all-targets 2>&1) | tee -a "$work/steps.log"

echo "== tutorial: kubegen init's scaffold generates, builds and passes its test"
kubegen init "$work/shop-operator" --group shop.example.com --version v1 --kind Order \
  --runtime-git "$KUBEGEN_GIT" --rev "$KUBEGEN_REV" | tee -a "$work/steps.log"
(cd "$work/shop-operator" && kubegen && cargo test --all-targets 2>&1) | tee -a "$work/steps.log"
if (cd "$work/shop-operator" && cargo tree -p shop-operator -e normal) | grep kubegen-testserver; then
  echo "== tutorial: the scaffold's production tree holds the test server" >&2
  exit 1
fi

# The tutorial's and the scaffold's code is what readers copy: it must compile without warnings.
if grep -q '^warning' "$work/steps.log"; then
  echo "== tutorial: the steps passed, but the compiler warned (see above)" >&2
  exit 1
fi
echo "== tutorial: every step passed"
