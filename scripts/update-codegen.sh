#!/usr/bin/env bash
# Regenerates everything kubegen owns from apis/ (see kubegen.toml): crates/generated/{api,
# clientset,listers,informers}, deploy/crd.yaml and deploy/crd-v1beta1.yaml (the same CRDs for API
# servers older than 1.16). Stale files of removed types are deleted.
# Also recompiles crates/codec/descriptors/kubernetes.fds, the protobuf descriptor set kubegen-codec
# embeds, from the vendored crates/codec/proto/ (hack/proto-descriptors).
# Extra arguments go to the kubegen binary (e.g. --check, which also compares the descriptor set
# instead of writing it).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --package kubegen-codegen --bin kubegen -- --config kubegen.toml "$@"

descriptors=crates/codec/descriptors/kubernetes.fds
compile_descriptors() { # <output file>
  cargo run --quiet --package kubegen-proto-descriptors -- crates/codec/proto "$1"
}
if [[ " $* " == *" --check "* ]]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  compile_descriptors "$tmp/kubernetes.fds"
  if ! cmp -s "$descriptors" "$tmp/kubernetes.fds"; then
    echo "$descriptors is out of date with crates/codec/proto/: run scripts/update-codegen.sh" >&2
    exit 1
  fi
else
  compile_descriptors "$descriptors"
fi
