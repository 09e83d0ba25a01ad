#!/usr/bin/env bash
# Acceptance of `kubegen import` on a real project's CRDs (codegen/tests/import/testdata):
# import them into a scratch project, generate its crates, build every generated crate (api,
# applyconfigurations, clientset with fakes, listers, informers) with k8s-openapi's `earliest` or
# `latest`, and decode then re-encode every example object the project ships, asserting JSON
# equal to the input (key order aside). Prints the generated line count and the build time.
#
# Not part of the default CI run: a set's crates take minutes to build on 2 cores (see
# docs/performance.md). `.ci/run` runs the Gateway API standard set when KUBEGEN_IMPORT_ACCEPTANCE=1.
#
# Usage: hack/import-acceptance.sh SET [earliest|latest]
#   SET: shapes (codegen/tests/import/shapes), gateway-api-standard, gateway-api-experimental, prometheus-operator, istio, argo-workflows
set -euo pipefail

set_name="${1:?usage: hack/import-acceptance.sh SET [earliest|latest]}"
k8s="${2:-latest}"
root="$(cd "$(dirname "$0")/.." && pwd)"
data="$root/codegen/tests/import/testdata"
examples=()
case "$set_name" in
    shapes) crds=("$root/codegen/tests/import/shapes/crds.yaml"); examples=("$root/codegen/tests/import/shapes/objects.yaml") ;;
    gateway-api-standard) crds=("$data/gateway-api/standard"); examples=("$data/gateway-api/examples-standard") ;;
    gateway-api-experimental) crds=("$data/gateway-api/experimental") ;;
    prometheus-operator) crds=("$data/prometheus-operator/prometheus-operator-crd-full") ;;
    istio) crds=("$data/istio/crd-all.gen.yaml") ;;
    argo-workflows) crds=("$data/argo-workflows/argoproj.io_workflows.yaml") ;;
    *) echo "unknown set $set_name" >&2; exit 2 ;;
esac

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cargo build -q -p kubegen-codegen --bin kubegen
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
kubegen="$target_dir/debug/kubegen"

cd "$work"
cat >kubegen.toml <<TOML
input = "apis"
output = "generated"
crd = "deploy/crd.yaml"
crate_prefix = "imported"
runtime = "path:$root/crates"
TOML
"$kubegen" import "${crds[@]}" >/dev/null
"$kubegen" >/dev/null
lines=$(find apis -name '*.rs' -exec cat {} + | wc -l)
generated=$(find generated -name '*.rs' -exec cat {} + | wc -l)
echo "== $set_name: $lines lines in apis/, $generated generated lines"

# The round-trip program: one decode arm per kind found in apis/.
mkdir -p roundtrip/src
python3 - "$work/apis" >roundtrip/src/kinds.rs <<'PY'
import os, re, sys
arms = []
for module in sorted(os.listdir(sys.argv[1])):
    for version in sorted(os.listdir(os.path.join(sys.argv[1], module))):
        folder = os.path.join(sys.argv[1], module, version)
        group = re.search(r"\+groupName=(\S+)", open(os.path.join(folder, "mod.rs")).read()).group(1)
        for name in sorted(os.listdir(folder)):
            text = open(os.path.join(folder, name)).read()
            for kind in re.findall(r"/// \+genclient\n(?:///.*\n)*pub struct (\w+)", text):
                arms.append(f'        ("{group}/{version}", "{kind}") => Some(round_trip::<imported_api::{module}::{version}::{kind}>(value)),')
print("use crate::round_trip;\n")
print("/// Decodes and re-encodes `value` as its kind; `None` for a kind the import does not have.")
print("pub fn by_kind(api_version: &str, kind: &str, value: &serde_json::Value) -> Option<serde_json::Value> {")
print("    match (api_version, kind) {")
print("\n".join(arms))
print("        _ => None,")
print("    }")
print("}")
PY
cat >roundtrip/src/main.rs <<'RS'
//! Decodes every YAML document of the files named on the command line into its generated type,
//! re-encodes it, and compares the JSON with the input.
mod kinds;

fn round_trip<K: serde::de::DeserializeOwned + serde::Serialize>(value: &serde_json::Value) -> serde_json::Value {
    let typed: K = serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("decode: {e}\n{value}"));
    serde_json::to_value(&typed).unwrap_or_else(|e| panic!("encode: {e}"))
}

fn main() {
    let (mut checked, mut failed) = (0, 0);
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        for document in serde_yaml::Deserializer::from_str(&text) {
            let value: serde_json::Value = serde::Deserialize::deserialize(document).unwrap_or_else(|e| panic!("{path}: {e}"));
            let (Some(api_version), Some(kind)) = (value["apiVersion"].as_str(), value["kind"].as_str()) else { continue };
            let Some(again) = kinds::by_kind(api_version, kind, &value) else { continue };
            checked += 1;
            if again != value {
                failed += 1;
                eprintln!("{path}: {kind} {} differs:\n  in:  {value}\n  out: {again}", value["metadata"]["name"]);
            }
        }
    }
    println!("roundtrip: {} passed, {failed} failed", checked - failed);
    if failed > 0 { std::process::exit(1); }
}
RS
cat >roundtrip/Cargo.toml <<TOML
[package]
name = "roundtrip"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
imported-api = { path = "../generated/api" }
k8s-openapi = { version = "0.29.0", default-features = false, features = ["std", "$k8s"] }
serde = { version = "1", features = ["derive"] }
serde_json = "1"
serde_yaml = "0.9"
TOML
members=$(cd generated && printf '"generated/%s", ' */)
cat >Cargo.toml <<TOML
[workspace]
resolver = "3"
members = [${members%, }, "roundtrip"]
TOML
cp "$root/Cargo.lock" .
start=$(date +%s)
# The fake feature compiles the clientset's fakes too.
cargo build -q --workspace --all-features
echo "== $set_name: generated crates built with k8s-openapi $k8s in $(( $(date +%s) - start ))s"
RUSTDOCFLAGS="-D warnings" cargo doc -q --workspace --all-features --no-deps
echo "== $set_name: cargo doc -D warnings on the generated crates passed"
if [ "${#examples[@]}" -gt 0 ]; then
    find "${examples[@]}" -name '*.yaml' -print0 | sort -z | xargs -0 cargo run -q -p roundtrip --
fi
