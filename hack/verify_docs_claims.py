"""Claims in prose that the code refutes (part of hack/verify-docs.py).

Paths, names, flags and counts are checked by shape. Some sentences go stale without naming any
of them: "the test server does not serve SelfSubjectReview", "owned kinds are not sharded", "the
benchmarks compare kubegen with kube-rs". Each rule here pairs such a claim with the fact in the
code that makes it false, so the rule fires only while the fact holds: when the code changes, the
claim may become true again and is no longer refused.

- Served kinds: a document under `crates/testserver/` or `docs/` that says the test server does
  not serve a kind (`there is no X`, `does not serve X`, `X is not served`) while
  `crates/testserver/src/registry/mod.rs` lists X.
- Refuted sentences (REFUTED below): a pattern, the file whose regex is the refuting fact, and
  what to say. Workspace packages' `description`s are read as well as markdown.
"""
import os
import re

NEGATED_BEFORE = re.compile(
    r"\b(?i:there (?:is|are) no|(?:does|do)(?:n't| not) serve|no support for|lacks?)\s+"
    r"(?:a |an |the )?`?([A-Z][A-Za-z0-9]+?)`?s?\b")
NEGATED_AFTER = re.compile(r"`?\b([A-Z][A-Za-z0-9]+?)`?s? (?:is|are)(?:n't| not) (?:served|supported)\b")
SERVED_KIND = re.compile(r'Builtin \{[^}]*\bkind: "(\w+)"')

# (claim regex, where it applies (regex on the path), refuting file, refuting regex, why)
REFUTED = [
    (r"\bowned (?:kinds|objects|resources)\b[^.]*\b(?:not|never|aren't)\s+sharded\b", r".",
     "crates/runtime/src", r"pub fn shard_owned\b",
     "owned kinds are sharded with their owner (`shard_owned`)"),
    (r"\bkubegen (?:against|with|vs\.?) kube-rs\b(?![^.]*client-go)", r".",
     "crates/bench/src/roles/client_go.rs", r"\bstruct ClientGo\b",
     "the benchmarks run client-go (cgbench) beside kube-rs: name both peers"),
]


def served_kinds(root):
    with open(os.path.join(root, "crates/testserver/src/registry/mod.rs"), encoding="utf-8") as f:
        return set(SERVED_KIND.findall(f.read()))


def fact_holds(root, path, pattern):
    """Whether `pattern` matches in `path` (a file, or every `.rs` file under a folder)."""
    full = os.path.join(root, path)
    files = [full]
    if os.path.isdir(full):
        files = [os.path.join(d, f) for d, _, fs in os.walk(full) for f in fs if f.endswith(".rs")]
    for name in files:
        with open(name, encoding="utf-8") as f:
            if re.search(pattern, f.read()):
                return True
    return False


def check_claims(path, text, root, served):
    """Problems with the prose of `path` (its text `text`), one line each."""
    flat = re.sub(r"\s+", " ", text)
    problems = []
    if re.match(r"^(crates/testserver/|docs/)", path):
        for pattern in (NEGATED_BEFORE, NEGATED_AFTER):
            for m in pattern.finditer(flat):
                if m.group(1) in served:
                    problems.append(f"{path}: says \"{m.group(0)}\", but the test server serves "
                                    f"{m.group(1)} (crates/testserver/src/registry/mod.rs)")
    for claim, where, fact_path, fact, why in REFUTED:
        if not re.search(where, path):
            continue
        for m in re.finditer(claim, flat, re.I):
            if fact_holds(root, fact_path, fact):
                problems.append(f"{path}: says \"{m.group(0)[:80]}\": {why}")
    return problems


def self_test(root):
    served = served_kinds(root)
    cases = [
        ("crates/testserver/README.md", "There is no SelfSubjectReview.", 1),
        ("crates/testserver/README.md", "It does not serve `SelfSubjectReview`s yet.", 1),
        ("crates/testserver/README.md", "SelfSubjectReviews are not served.", 1),
        ("crates/testserver/README.md", "There is no `PodDisruptionBudget`.", 0),
        ("crates/testserver/README.md", "a `SelfSubjectReview` has no `extra`", 0),
        ("crates/runtime/README.md", "Owned kinds are not sharded: every replica watches them.", 1),
        ("crates/runtime/README.md", "Owned kinds are sharded with their owner.", 0),
        ("crates/bench/README.md", "binaries that compare kubegen with kube-rs and the floors", 1),
        ("crates/bench/README.md", "compare kubegen with kube-rs and client-go", 0),
    ]
    failed = 0
    for path, text, want in cases:
        got = len(check_claims(path, text, root, served))
        if got != want:
            failed += 1
            print(f"self-test: claims {path} {text!r}: {got} problem(s), want {want}")
    return failed
