#!/usr/bin/env bash
# Refreshes the vendored Kubernetes protobuf schema from upstream git checkouts.
#
#   crates/codec/proto/update.sh <k8s.io/api> <k8s.io/apimachinery> <k8s.io/apiextensions-apiserver> <tag>
#
# Each argument is a git directory (a clone or a bare mirror) of the repository; <tag> is the
# release tag of all three (e.g. v0.36.2 for Kubernetes 1.36.2). Copies every generated.proto of the
# GA versions (v1, v2) of k8s.io/api, the apimachinery and apiextensions ones they import, the
# LICENSE of each repository, regenerates go-fields.txt from the Go types of the same tag, and
# recompiles the descriptor set the codec embeds (../descriptors/kubernetes.fds).
set -euo pipefail
api=$1 machinery=$2 extensions=$3 tag=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$here/k8s.io"

copy() { # <git dir> <path in repo> <destination prefix>
  mkdir -p "$(dirname "$here/$3/$2")"
  git -C "$1" show "$tag:$2" >"$here/$3/$2"
}
api_dirs=$(git -C "$api" ls-tree -r --name-only "$tag" | grep -E '^[a-z]+/v[12]/generated.proto$' | xargs -n1 dirname)
machinery_dirs="pkg/api/resource pkg/apis/meta/v1 pkg/runtime pkg/runtime/schema pkg/util/intstr"
extensions_dirs="pkg/apis/apiextensions/v1"
for d in $api_dirs; do copy "$api" "$d/generated.proto" k8s.io/api; done
for d in $machinery_dirs; do copy "$machinery" "$d/generated.proto" k8s.io/apimachinery; done
for d in $extensions_dirs; do copy "$extensions" "$d/generated.proto" k8s.io/apiextensions-apiserver; done
copy "$api" LICENSE k8s.io/api
copy "$machinery" LICENSE k8s.io/apimachinery
copy "$extensions" LICENSE k8s.io/apiextensions-apiserver

go_sources() { # <git dir> <dir> <proto package>: "<package>\t<line>" for each Go source line
  for f in $(git -C "$1" ls-tree --name-only "$tag" "$2/" | grep -E '\.go$' | grep -v -E '_test|generated|zz_'); do
    git -C "$1" show "$tag:$f" | sed "s|^|$3\t|"
  done
}
{
  for d in $api_dirs; do go_sources "$api" "$d" "k8s.io.api.${d//\//.}"; done
  for d in $machinery_dirs; do go_sources "$machinery" "$d" "k8s.io.apimachinery.${d//\//.}"; done
  for d in $extensions_dirs; do go_sources "$extensions" "$d" "k8s.io.apiextensions_apiserver.${d//\//.}"; done
} | perl "$here/go-fields.pl" >"$here/go-fields.txt"
echo "$tag" >"$here/VERSION"
cargo run --quiet --manifest-path "$here/../../../Cargo.toml" --package kubegen-proto-descriptors -- \
  "$here" "$here/../descriptors/kubernetes.fds"
