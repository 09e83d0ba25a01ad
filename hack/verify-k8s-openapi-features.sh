#!/usr/bin/env bash
# Fails when a kubegen library crate enables a k8s-openapi version feature (`earliest`, `latest`,
# `v1_xx`) through its normal dependencies. k8s-openapi compiles for exactly one Kubernetes version
# per build and leaves the choice to the application; a library that picks one makes every
# application that picks another fail to build. Libraries pick a version only in
# [dev-dependencies], for their own tests (this part reads the dependency graph only).
#
# Then checks that every library compiles for the newest Kubernetes version k8s-openapi knows
# (`latest`), while the workspace's tests build them for the oldest (`earliest`): k8s-openapi's
# types differ between versions (a field's type, a field that exists in one only), and an
# application may pick either.
set -euo pipefail
cd "$(dirname "$0")/.."
libraries=(
  kubegen-api kubegen-cache kubegen-client kubegen-clientset kubegen-codec
  kubegen-controller-manager kubegen-embedded kubegen-fake kubegen-flowcontrol kubegen-informers
  kubegen-leaderelection kubegen-listers kubegen-runtime kubegen-sharding kubegen-testserver
  kubegen-workqueue
)
status=0
for library in "${libraries[@]}"; do
  picked=$(cargo tree --quiet -p "$library" -e normal,features -i k8s-openapi 2>/dev/null \
    | grep -oE 'k8s-openapi feature "(earliest|latest|v1_[0-9]+)"' | sort -u || true)
  if [ -n "$picked" ]; then
    echo "$library selects a Kubernetes version in its normal dependencies: $picked" >&2
    cargo tree --quiet -p "$library" -e normal,features -i k8s-openapi >&2 || true
    status=1
  fi
done
if [ "$status" -ne 0 ]; then
  exit "$status"
fi
echo "no library crate selects a k8s-openapi version feature"

packages=()
for library in "${libraries[@]}"; do packages+=(-p "$library"); done
cargo check --quiet "${packages[@]}" --features k8s-openapi/latest,kubegen-clientset/fake
echo "every library crate compiles with k8s-openapi's latest"
