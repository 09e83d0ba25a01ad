#!/usr/bin/env bash
# Regenerates everything kubegen owns from apis/ (see kubegen.toml): crates/generated/{api,
# clientset,listers,informers} and deploy/crd.yaml. Stale files of removed types are deleted.
# Extra arguments go to the kubegen binary (e.g. --check).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --package kubegen-codegen --bin kubegen -- --config kubegen.toml "$@"
