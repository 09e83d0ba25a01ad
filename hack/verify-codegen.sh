#!/usr/bin/env bash
# Fails (exit 1, with a diff) when the committed generated code is not exactly what kubegen
# produces from apis/ now: regenerates into a temporary directory and compares. Files present only
# in the repository (generated from a type that no longer exists) count as drift too.
# Also fails when crates/codec/descriptors/kubernetes.fds (the protobuf descriptor set kubegen-codec
# embeds) is not byte-for-byte what hack/proto-descriptors compiles from crates/codec/proto/ now.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cargo run --quiet --package kubegen-codegen --bin kubegen -- --config kubegen.toml \
  --output "$tmp/crates/generated" --crd "$tmp/deploy/crd.yaml" \
  --crd-v1beta1 "$tmp/deploy/crd-v1beta1.yaml" >/dev/null
cargo run --quiet --package kubegen-proto-descriptors -- crates/codec/proto "$tmp/kubernetes.fds"
status=0
diff -ru --exclude=target crates/generated "$tmp/crates/generated" || status=1
diff -u deploy/crd.yaml "$tmp/deploy/crd.yaml" || status=1
diff -u deploy/crd-v1beta1.yaml "$tmp/deploy/crd-v1beta1.yaml" || status=1
descriptors=crates/codec/descriptors/kubernetes.fds
if ! cmp "$descriptors" "$tmp/kubernetes.fds"; then
  echo "$descriptors does not match the .proto files under crates/codec/proto/" \
    "(edited by hand, or the protos changed without regenerating)" >&2
  status=1
fi
if [ "$status" -ne 0 ]; then
  echo "generated code is out of date: run scripts/update-codegen.sh and commit the result" >&2
  exit 1
fi
echo "generated code is up to date"
