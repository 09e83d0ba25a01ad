#!/usr/bin/env python3
"""Regenerates crates/testserver/openapi/builtin.json.gz: the OpenAPI documents the test server
serves for its built-in kinds, taken from a real kube-apiserver.

Usage: KUBECONFIG=<admin kubeconfig of a real server> hack/update-openapi-data.py
       hack/update-openapi-data.py --codegen-only   (rewrites only codegen/openapi/wellknown.json
                                                      from the bundle already in the repository)

What it does: downloads the server's /openapi/v2 and /openapi/v3/<path> documents as JSON (the
upstream documents, exactly as the API server builds them from the Kubernetes types), keeps only
the paths of the resources and subresources the test server serves (SERVED below, which mirrors
crates/testserver/src/registry/mod.rs; a unit test there fails when the two drift apart), keeps only the
schemas those paths reach, and writes one gzip bundle (deterministic: mtime 0, sorted keys):

    {"source": {"gitVersion": ..., "note": ...},
     "v2": <swagger 2.0 document>,
     "v3": {"api/v1": <OpenAPI 3.0 document>, "apis/apps/v1": ..., ...},
     "crdTemplates": {"Namespaced": {"v2": <paths>, "v3": <paths>, "v3Schemas": <schemas>},
                      "Cluster": ...}}

The CRD templates are the paths the real server publishes for two throw-away CustomResourceDefinitions
(one per scope, both with status and scale subresources) that the script creates and deletes again;
the test server derives every CRD's paths from them by renaming (see crates/testserver/src/openapi/
paths.rs for the names). `v3Schemas` are the other schemas of the template's v3 document
(ObjectMeta, Status, Scale, ...), which a CRD's document carries as the real one does.

It also writes codegen/openapi/wellknown.json: the v3 component schemas of the well-known types
that API structs may name by their bare name (WELL_KNOWN below, mirrored by codegen/src/wellknown.rs,
whose unit tests fail when the two drift apart), of every served kind (the schemas carrying an
`x-kubernetes-group-version-kind`, lists excepted: kubegen generates the built-in kinds' apply
configurations from them, see codegen/src/emit/applyconfig/builtin.rs) and every schema they
reference, so that kubegen can inline the upstream schemas into CRDs and write apply
configurations without depending on a runtime crate.
"""

import gzip
import json
import os
import re
import subprocess
import sys
import time

# group/version -> plural -> served subresources. Mirrors BUILTINS in
# crates/testserver/src/registry/mod.rs, plus `scale` where the test server serves it.
SERVED = {
    "v1": {
        "namespaces": ["status", "finalize"],
        "configmaps": [],
        "secrets": [],
        "pods": ["status"],
        "services": ["status"],
        "serviceaccounts": ["token"],
        "nodes": ["status"],
        "events": [],
        "persistentvolumeclaims": ["status"],
    },
    "events.k8s.io/v1": {"events": []},
    "apps/v1": {
        "deployments": ["status", "scale"],
        "replicasets": ["status", "scale"],
        "statefulsets": ["status", "scale"],
        "controllerrevisions": [],
        "daemonsets": ["status"],
    },
    "batch/v1": {"jobs": ["status"], "cronjobs": ["status"]},
    "coordination.k8s.io/v1": {"leases": []},
    "discovery.k8s.io/v1": {"endpointslices": []},
    "authentication.k8s.io/v1": {"selfsubjectreviews": [], "tokenreviews": []},
    "authorization.k8s.io/v1": {
        "selfsubjectaccessreviews": [],
        "selfsubjectrulesreviews": [],
    },
    "rbac.authorization.k8s.io/v1": {
        "clusterroles": [],
        "clusterrolebindings": [],
        "roles": [],
        "rolebindings": [],
    },
    "admissionregistration.k8s.io/v1": {
        "mutatingwebhookconfigurations": [],
        "validatingwebhookconfigurations": [],
        "validatingadmissionpolicies": ["status"],
        "validatingadmissionpolicybindings": [],
        "mutatingadmissionpolicies": [],
        "mutatingadmissionpolicybindings": [],
    },
    "apiextensions.k8s.io/v1": {"customresourcedefinitions": ["status"]},
}

OUT = os.path.join(
    os.path.dirname(os.path.abspath(__file__)),
    "..",
    "crates",
    "testserver",
    "openapi",
    "builtin.json.gz",
)


# Names of the template CRDs; paths.rs replaces exactly these.
TEMPLATE_GROUP = "tmplgroup.kubegen.example.com"
TEMPLATE_VERSION = "v9tmpl"
TEMPLATE_KINDS = {"Namespaced": "TmplKind", "Cluster": "TmplClusterKind"}


def template_crd(scope):
    kind = TEMPLATE_KINDS[scope]
    plural = kind.lower() + "s"
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "%s.%s" % (plural, TEMPLATE_GROUP)},
        "spec": {
            "group": TEMPLATE_GROUP,
            "scope": scope,
            "names": {"kind": kind, "listKind": kind + "List", "plural": plural},
            "versions": [{
                "name": TEMPLATE_VERSION, "served": True, "storage": True,
                "subresources": {"status": {}, "scale": {
                    "specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
                "schema": {"openAPIV3Schema": {"type": "object"}},
            }],
        },
    }


def crd_templates():
    """Creates the template CRDs, reads the paths the server publishes for them, deletes them."""
    out = {}
    for scope in TEMPLATE_KINDS:
        crd = template_crd(scope)
        subprocess.run(["kubectl", "apply", "-f", "-"], input=json.dumps(crd).encode(),
                       check=True, capture_output=True)
        try:
            prefix = "/apis/%s/%s/" % (TEMPLATE_GROUP, TEMPLATE_VERSION)
            plural = crd["spec"]["names"]["plural"]
            for _ in range(60):
                # The server publishes a new CRD's documents a moment after creating it.
                try:
                    v3 = get_raw("/openapi/v3/" + prefix[1:-1])
                except subprocess.CalledProcessError:
                    v3 = {}
                v2 = get_raw("/openapi/v2")
                mine = lambda paths: {p: v for p, v in paths.items()
                                      if p.startswith(prefix) and "/" + plural in p}
                if mine(v3.get("paths", {})) and mine(v2["paths"]):
                    break
                time.sleep(1)
            template_names = ("com.example.kubegen.tmplgroup.",)
            schemas = {k: v for k, v in v3["components"]["schemas"].items()
                       if not k.startswith(template_names)}
            out[scope] = {"v3": mine(v3["paths"]), "v2": mine(v2["paths"]), "v3Schemas": schemas}
        finally:
            subprocess.run(["kubectl", "delete", "crd", crd["metadata"]["name"]],
                           check=True, capture_output=True)
    return out


def get_raw(path):
    out = subprocess.run(
        ["kubectl", "get", "--raw", path], check=True, capture_output=True
    ).stdout
    return json.loads(out)


def gv_prefix(gv):
    return "/api/v1" if gv == "v1" else "/apis/" + gv


def served_groups():
    return sorted({gv.split("/")[0] for gv in SERVED if "/" in gv})


def keep_path(path):
    """Whether the test server serves `path` (an OpenAPI path template)."""
    if path in ("/api/", "/apis/", "/version/"):
        return True
    if any(path == "/apis/%s/" % g for g in served_groups()):
        return True
    for gv, plurals in SERVED.items():
        prefix = gv_prefix(gv) + "/"
        if not path.startswith(prefix):
            continue
        rest = [s for s in path[len(prefix):].split("/") if s]
        if not rest:
            return True
        if rest[0] == "watch":
            rest = rest[1:]
        if len(rest) >= 3 and rest[0] == "namespaces" and rest[1] == "{namespace}":
            rest = rest[2:]
        if not rest or rest[0] not in plurals:
            return False
        return len(rest) < 3 or rest[2] in plurals[rest[0]]
    return False


REF = re.compile(r'"\$ref":\s*"#/(?:components/schemas|definitions)/([^"]+)"')


def reachable(roots, schemas):
    """Names of the schemas `roots` (JSON values) reference, transitively."""
    seen = set()
    todo = [json.dumps(r) for r in roots]
    while todo:
        for name in REF.findall(todo.pop()):
            if name not in seen and name in schemas:
                seen.add(name)
                todo.append(json.dumps(schemas[name]))
    return seen


def trim_v3(doc):
    doc["paths"] = {p: v for p, v in doc.get("paths", {}).items() if keep_path(p)}
    components = doc.get("components", {})
    schemas = components.get("schemas", {})
    others = {k: v for k, v in components.items() if k != "schemas"}
    keep = reachable([doc["paths"], others], schemas)
    if schemas:
        components["schemas"] = {k: v for k, v in schemas.items() if k in keep}
    return doc


def trim_v2(doc):
    doc["paths"] = {p: v for p, v in doc["paths"].items() if keep_path(p)}
    definitions = doc["definitions"]
    keep = reachable([doc["paths"], doc.get("parameters", {})], definitions)
    doc["definitions"] = {k: v for k, v in definitions.items() if k in keep}
    return doc


def v3_paths(index):
    wanted = {"api", "apis", "version"}
    wanted |= {gv_prefix(gv)[1:] for gv in SERVED}
    wanted |= {"apis/" + g for g in served_groups()}
    missing = wanted - set(index["paths"])
    if missing:
        sys.exit("the server does not publish %s" % sorted(missing))
    return sorted(wanted)


# The roots of codegen/openapi/wellknown.json (see codegen/src/wellknown.rs).
WELL_KNOWN = [
    "io.k8s.apimachinery.pkg.apis.meta.v1.Condition",
    "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
    "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
    "io.k8s.api.core.v1.EnvVar",
    "io.k8s.api.core.v1.LocalObjectReference",
    "io.k8s.api.core.v1.ObjectReference",
    "io.k8s.api.core.v1.PodTemplateSpec",
    "io.k8s.api.core.v1.ResourceRequirements",
    "io.k8s.api.core.v1.Toleration",
]
CODEGEN_OUT = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "codegen", "openapi", "wellknown.json"
)


def is_kind(schema):
    """Whether a component schema is a top-level kind (not a list of one)."""
    gvks = schema.get("x-kubernetes-group-version-kind", [])
    return any(not gvk["kind"].endswith("List") for gvk in gvks) and "metadata" in schema.get(
        "properties", {})


def write_codegen_schemas(bundle):
    """codegen/openapi/wellknown.json: WELL_KNOWN, the served kinds and the schemas they reach,
    from the v3 docs."""
    schemas = {}
    for doc in bundle["v3"].values():
        schemas.update(doc.get("components", {}).get("schemas", {}))
    missing = [name for name in WELL_KNOWN if name not in schemas]
    if missing:
        sys.exit("the served documents do not reach %s" % missing)
    kinds = [name for name, schema in schemas.items() if is_kind(schema)]
    roots = set(WELL_KNOWN) | set(kinds)
    keep = roots | reachable([schemas[name] for name in roots], schemas)
    out = {
        "source": {
            "gitVersion": bundle["source"]["gitVersion"],
            "note": "Component schemas of the upstream OpenAPI v3 documents, written by "
            "hack/update-openapi-data.py. Do not edit by hand.",
        },
        "schemas": {name: schemas[name] for name in sorted(keep)},
    }
    with open(CODEGEN_OUT, "w") as f:
        json.dump(out, f, sort_keys=True, indent=1)
        f.write("\n")
    print("%s: %d schemas" % (os.path.normpath(CODEGEN_OUT), len(keep)))


def main():
    if sys.argv[1:] == ["--codegen-only"]:
        with gzip.open(OUT) as f:
            write_codegen_schemas(json.load(f))
        return
    version = get_raw("/version")
    index = get_raw("/openapi/v3")
    bundle = {
        "source": {
            "gitVersion": version["gitVersion"],
            "note": "Downloaded from a real kube-apiserver by hack/update-openapi-data.py and "
            "trimmed to the resources the test server serves. Do not edit by hand.",
        },
        "v2": trim_v2(get_raw("/openapi/v2")),
        "v3": {p: trim_v3(get_raw("/openapi/v3/" + p)) for p in v3_paths(index)},
        "crdTemplates": crd_templates(),
    }
    data = json.dumps(bundle, sort_keys=True, separators=(",", ":")).encode()
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "wb") as f:
        with gzip.GzipFile(fileobj=f, mode="wb", mtime=0, compresslevel=9, filename="") as gz:
            gz.write(data)
    print("%s: %d bytes JSON, %d bytes gzip (from %s)"
          % (os.path.normpath(OUT), len(data), os.path.getsize(OUT), version["gitVersion"]))
    write_codegen_schemas(bundle)


if __name__ == "__main__":
    main()
