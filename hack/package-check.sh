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
# crates.io refuses a .crate over 10 MiB: test data belongs in `exclude`, not in the package.
mapfile -t crates < <(cargo metadata --format-version 1 --no-deps | python3 -c '
import json, sys
meta = json.load(sys.stdin)
for p in meta["packages"]:
    if p.get("publish") != []:
        print("%s/package/%s-%s.crate" % (meta["target_directory"], p["name"], p["version"]))')
limit=$((10 * 1024 * 1024))
for crate in "${crates[@]}"; do
    size=$(stat -c %s "$crate")
    if [ "$size" -gt "$limit" ]; then
        echo "package-check: $crate is $size bytes, over crates.io's 10 MiB limit (exclude its test data)" >&2
        exit 1
    fi
done
echo "package-check: every .crate is under crates.io's 10 MiB limit"
