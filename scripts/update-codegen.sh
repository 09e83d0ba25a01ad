#!/usr/bin/env bash
# Regenerates everything kubegen owns from apis/ (see kubegen.toml): crates/generated/{api,
# clientset,listers,informers}, deploy/crd.yaml and deploy/crd-v1beta1.yaml (the same CRDs for API
# servers older than 1.16). Stale files of removed types are deleted.
# Extra arguments go to the kubegen binary (e.g. --check).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --package kubegen-codegen --bin kubegen -- --config kubegen.toml "$@"
