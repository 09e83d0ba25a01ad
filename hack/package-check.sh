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
# Cargo unpacks a registry's crate once per name and version into
# $CARGO_HOME/registry/src/<registry>/ and never reads the .crate again. The overlay registry
# lives at the same path on every run and our versions do not move between commits, so on a
# machine that ran this before, a crate would be verified against the last run's sources of the
# crates it depends on. Local registries have no host: their folders' names start with '-'.
cargo_home=${CARGO_HOME:-$HOME/.cargo}
for name in "${publishable[@]}"; do
    rm -rf "$cargo_home"/registry/src/-*/"$name"-[0-9]*
done
# For the same reason cargo would find an earlier verification build fresh: it compares the
# sources' mtimes with the build's, and every file of a .crate has the same fixed old mtime. The
# builds of packaged sources are the ones whose dep files name a packaged folder or a local
# registry's unpacked copy; forgetting their fingerprints makes cargo build them again.
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
python3 - "$target_dir/debug" <<'PY'
import pathlib, re, shutil, sys
debug = pathlib.Path(sys.argv[1])
packaged = re.compile(r"/package/kubegen-[^/ ]+/|/registry/src/-[^/ ]+/")
for dep_file in debug.glob("deps/kubegen_*.d"):
    with dep_file.open(errors="replace") as f:
        first = f.readline()
    if packaged.search(first):
        build_hash = dep_file.stem.rsplit("-", 1)[-1]
        for fingerprint in debug.glob(".fingerprint/*-" + build_hash):
            shutil.rmtree(fingerprint)
PY
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
