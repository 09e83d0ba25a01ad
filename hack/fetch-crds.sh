#!/usr/bin/env bash
# Refreshes the real projects' CRDs that `kubegen import` is tested on
# (codegen/tests/import/testdata/<project>/), from local git clones of the projects.
#
# Why clones and not downloads: CI machines reach package registries only, so the CRDs are
# committed (all four projects are Apache-2.0; each folder keeps the LICENSE, the NOTICE where the
# project has one, and SOURCE naming the commit). Run this on a machine that has the clones, at
# the commits you want, then review and commit the diff.
#
# Usage: hack/fetch-crds.sh GATEWAY_API_CLONE PROMETHEUS_OPERATOR_CLONE ISTIO_CLONE ARGO_WORKFLOWS_CLONE
# Each argument is a git directory or work tree (`git -C <arg>` must work).
set -euo pipefail

if [ "$#" -ne 4 ]; then
    sed -n '2,13p' "$0" >&2
    exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/codegen/tests/import/testdata"

# copy <clone> <folder> <path in the clone>=<name in the folder> [more...]
copy() {
    local clone="$1" folder="$2"
    shift 2
    local commit
    commit="$(git -C "$clone" rev-parse HEAD)"
    rm -rf "${out:?}/$folder"
    mkdir -p "$out/$folder"
    for pair in "$@"; do
        local path="${pair%%=*}" target="$out/$folder/${pair#*=}"
        if [ "$(git -C "$clone" cat-file -t "HEAD:$path")" = tree ]; then
            mkdir -p "$target"
            local depth
            depth="$(tr -cd / <<<"$path" | wc -c)"
            git -C "$clone" archive --format=tar HEAD "$path" | tar -x -C "$target" --strip-components="$((depth + 1))"
        else
            git -C "$clone" show "HEAD:$path" >"$target"
        fi
    done
    git -C "$clone" show HEAD:LICENSE >"$out/$folder/LICENSE"
    if git -C "$clone" cat-file -e HEAD:NOTICE 2>/dev/null; then
        git -C "$clone" show HEAD:NOTICE >"$out/$folder/NOTICE"
    fi
    printf 'Copied by hack/fetch-crds.sh from %s at commit %s:\n' \
        "$(git -C "$clone" config --get remote.origin.url || echo "$folder")" "$commit" >"$out/$folder/SOURCE"
    printf '  %s\n' "${@/=/ -> }" >>"$out/$folder/SOURCE"
}

# examples <clone> <folder> <dir in the clone> <apiVersion regex>: the YAML files below the dir
# that hold objects of the project's own API (examples/ in the folder, same paths below the dir),
# and their paths appended to SOURCE. Other files there (Deployments, RBAC) are left out, and so
# are templates that are not YAML yet (Helm's `{{ }}`).
examples() {
    local clone="$1" folder="$2" dir="$3" api="$4" file
    git -C "$clone" ls-tree -r --name-only HEAD "$dir" | grep '\.yaml$' | grep -v -- '-crd' |
        while read -r file; do
            if git -C "$clone" show "HEAD:$file" | grep -Eq "^apiVersion: $api" &&
                ! git -C "$clone" show "HEAD:$file" | grep -q '{{'; then
                mkdir -p "$out/$folder/examples/$(dirname "${file#"$dir"/}")"
                git -C "$clone" show "HEAD:$file" >"$out/$folder/examples/${file#"$dir"/}"
                printf '  %s -> examples/%s\n' "$file" "${file#"$dir"/}" >>"$out/$folder/SOURCE"
            fi
        done
}

copy "$1" gateway-api config/crd/standard=standard config/crd/experimental=experimental \
    examples/standard=examples-standard examples/experimental=examples-experimental
# The safe-upgrades ValidatingAdmissionPolicy is not a CRD; import skips it anyway.
copy "$2" prometheus-operator example/prometheus-operator-crd-full=prometheus-operator-crd-full
examples "$2" prometheus-operator example 'monitoring\.coreos\.com/'
copy "$3" istio manifests/charts/base/files/crd-all.gen.yaml=crd-all.gen.yaml
examples "$3" istio samples '(networking|security|telemetry|extensions)\.istio\.io/'
copy "$4" argo-workflows manifests/base/crds/full/argoproj.io_workflows.yaml=argoproj.io_workflows.yaml
examples "$4" argo-workflows examples 'argoproj\.io/'
echo "hack/fetch-crds.sh: refreshed $out"
