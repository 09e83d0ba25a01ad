#!/usr/bin/env bash
# Builds every publishable crate from its packaged .crate file, against the others' (cargo
# package's local registry overlay), as crates.io users will get them: a file outside a crate's
# folder or missing from what it packages fails here, not at release time. Crates that say
# `publish = false` (applications, bench, fuzz, tests) are left out: `cargo package --workspace`
# would package them too.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t publishable < <(cargo metadata --format-version 1 --no-deps | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p.get("publish") != []:
        print(p["name"])')
args=()
for name in "${publishable[@]}"; do args+=(-p "$name"); done
echo "package-check: ${#publishable[@]} publishable crates: ${publishable[*]}"
# A library picks no Kubernetes version (the application does, k8s-openapi's rule): the
# verification builds pick the newest k8s-openapi supports through its variable for builds
# without an application (docs.rs picks it through [package.metadata.docs.rs]).
K8S_OPENAPI_ENABLED_VERSION=1.37 cargo package "${args[@]}" "$@"
