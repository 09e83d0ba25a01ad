#!/usr/bin/env python3
"""Checks that what the markdown files name exists: a document that names a path, a crate or a
binary makes a promise the code must keep (STYLE.md, rule 19), and every move of a file breaks
such promises silently unless a script reads them.

Checked in every tracked `*.md` file:
- repository paths, in backticks or as relative links: a path that starts with one of the
  repository's top-level folders must exist from the root; any other path with a `/` and a file
  extension must exist from the document's folder, its crate's folder or that crate's `src/`;
- crate names (`kubegen-…` in backticks or after `-p`): a workspace package;
- binaries (`--bin NAME`): a binary target of the workspace;
- README's layout table: a row for every workspace member, naming its crate;
- release tags (`--tag v0.1.0`, `tag = "v0.1.0"`): tags this repository has;
- tables whose last column is headed `where` or `file`: every type a row's kubegen column names
  is defined (or implemented) in the files or folders the row points to;
- claims in prose that the code refutes ("the test server does not serve SelfSubjectReview",
  "owned kinds are not sharded"), in markdown and in the packages' descriptions: see
  hack/verify_docs_claims.py.

Not paths: absolute paths, URLs, globs and placeholders (`*`, `<`, `{`, `$`, `~`, `...`) and Go
files (client-go's). Two comments in a document say what else it means:
- `<!-- verify-docs: not-here NAME ... -->`: names of the reader's own project or of another
  repository (the tutorial's `operator/src/lib.rs`, a thesis's `docs/evaluation.md`), one by one;
- `<!-- verify-docs: base DIR -->`: the crate a document under `docs/` walks through, whose
  `src/...` paths it names (docs/informer-internals.md reads crates/cache).

With `--flags` (after a build: it runs each binary's `--help`), also the flags:
- a flag table (a table whose first column is headed `flag`) after the comment
  `<!-- verify-docs: flags BINARY [SUBCOMMAND] -->` lists exactly the binary's flags: none it
  lacks, none it does not have;
- a command in a code block or in backticks that runs one of the workspace's binaries (by name,
  or `cargo run ... --bin NAME --`) uses only flags the binary has, and the ones its usage line
  requires (`kubegen init` takes `--runtime-git` or `--runtime-path`).

Counts: a document does not state a number a script prints (the kubectl smoke's operations), and
a number it states of something the repository holds is that number (replicas in
deploy/deployment.yaml, the generated crates of the `init` scaffold, flags read from the
environment in image-police's flags.rs).

Usage: hack/verify-docs.py [--self-test] [--flags]   (exit 1 and one line per broken reference)
"""
import os
import re
import subprocess
import sys
import tomllib

from verify_docs_claims import check_claims, served_kinds
from verify_docs_claims import self_test as claims_self_test

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DIRECTIVE = re.compile(r"<!-- verify-docs: (not-here|base) ([^>]*?)\s*-->")
FILE_EXT = re.compile(r"\.(rs|md|toml|ya?ml|sh|py|json|txt|proto|csv|gz|svg|png)$")
PLACEHOLDER = re.compile(r"[*<>{}$~]|\.\.\.")
# `apps/v1`, `batch/v1beta1`: a Kubernetes group/version, not a path under apps/.
GROUP_VERSION = re.compile(r"^[a-z0-9.-]+/v[0-9]+((alpha|beta)[0-9]+)?$")
BACKTICK = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")
CRATE = re.compile(r"(?<![\w#/-])(kubegen-[a-z][a-z0-9-]*[a-z0-9])(?![\w-])")
PACKAGE_FLAG = re.compile(r"(?:-p|--package)\s+(kubegen-[a-z0-9-]+)")
BIN_FLAG = re.compile(r"--bin\s+([A-Za-z0-9_-]+)")


def workspace():
    """Package names, binary names and member folders of the workspace."""
    with open(os.path.join(ROOT, "Cargo.toml"), "rb") as f:
        members = tomllib.load(f)["workspace"]["members"]
    packages, binaries = set(), set()
    for member in members:
        with open(os.path.join(ROOT, member, "Cargo.toml"), "rb") as f:
            manifest = tomllib.load(f)
        name = manifest["package"]["name"]
        packages.add(name)
        for b in manifest.get("bin", []):
            binaries.add(b["name"])
        if os.path.exists(os.path.join(ROOT, member, "src", "main.rs")):
            binaries.add(name)
        bin_dir = os.path.join(ROOT, member, "src", "bin")
        if os.path.isdir(bin_dir):
            for entry in os.listdir(bin_dir):
                binaries.add(entry[:-3] if entry.endswith(".rs") else entry)
    return packages, binaries, members


def binaries_of(packages):
    """Binary name → (package, features) of every workspace binary."""
    with open(os.path.join(ROOT, "Cargo.toml"), "rb") as f:
        members = tomllib.load(f)["workspace"]["members"]
    out = {}
    for member in members:
        with open(os.path.join(ROOT, member, "Cargo.toml"), "rb") as f:
            manifest = tomllib.load(f)
        name = manifest["package"]["name"]
        for b in manifest.get("bin", []):
            out[b["name"]] = (name, b.get("required-features", []))
        bin_dir = os.path.join(ROOT, member, "src", "bin")
        if os.path.isdir(bin_dir):
            for entry in os.listdir(bin_dir):
                out.setdefault(entry[:-3] if entry.endswith(".rs") else entry, (name, []))
    return out


def markdown_files():
    out = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True, check=True)
    # The `init` scaffold's templates are the reader's documents, written into their project.
    return [p for p in out.stdout.split() if p and not p.startswith("codegen/src/init/templates/")]


def crate_dir(doc_dir):
    """The nearest folder at or above `doc_dir` with a Cargo.toml, below the root."""
    d = doc_dir
    while d and d != ".":
        if os.path.exists(os.path.join(ROOT, d, "Cargo.toml")):
            return d
        d = os.path.dirname(d)
    return None


def without_code_blocks(text):
    """Prose only: fenced code blocks hold commands and the reader's files, checked separately."""
    return re.sub(r"```.*?```", "", text, flags=re.S)


def code_blocks(text):
    return "\n".join(re.findall(r"```[^\n]*\n(.*?)```", text, flags=re.S))


def path_candidates(prose):
    for m in BACKTICK.finditer(prose):
        token = m.group(1).strip()
        # `cmd path`: a command's argument may be a path; keep single words only.
        if " " in token:
            continue
        yield token.rstrip(",.:;")
    for m in LINK.finditer(prose):
        yield m.group(1)


def is_checkable(token, top_dirs):
    if not token or "://" in token or token.startswith(("/", "#", "mailto:")) or PLACEHOLDER.search(token):
        return False
    if token.endswith(".go") or token.startswith("-") or GROUP_VERSION.match(token):
        return False
    first = token.split("/")[0]
    if first in top_dirs and "/" in token:
        return True
    return "/" in token and bool(FILE_EXT.search(token.split(":")[0]))


def resolves(token, doc, top_dirs, extra_bases):
    path = token.split(":")[0].rstrip("/")  # `file.rs:193` names a line
    doc_dir = os.path.dirname(doc)
    if path.split("/")[0] in top_dirs and os.path.exists(os.path.join(ROOT, path)):
        return True
    bases = [doc_dir] + [b for base in extra_bases for b in (base, os.path.join(base, "src"))]
    crate = crate_dir(doc_dir)
    if crate:
        bases += [crate, os.path.join(crate, "src")]
    return any(os.path.exists(os.path.normpath(os.path.join(ROOT, b, path))) for b in bases)


def check(doc, text, packages, binaries, top_dirs):
    problems = []
    not_here, bases = set(), []
    for kind, names in DIRECTIVE.findall(text):
        (not_here.update if kind == "not-here" else bases.extend)(names.split())
    prose = without_code_blocks(text)
    code = code_blocks(text)

    def line_of(fragment):
        i = text.find(fragment)
        return text.count("\n", 0, i) + 1 if i >= 0 else 0

    for token in path_candidates(prose):
        if not is_checkable(token, top_dirs):
            continue
        if token in not_here:
            continue
        if not resolves(token, doc, top_dirs, bases):
            problems.append(f"{doc}:{line_of(token)}: path `{token}` does not exist")
    for word in re.findall(r"[\w./-]+", code):
        word = word.rstrip("/.:,")
        if GROUP_VERSION.match(word):
            continue
        if word.split("/")[0] in top_dirs and "/" in word and word not in not_here and not PLACEHOLDER.search(word):
            if not os.path.exists(os.path.join(ROOT, word)):
                problems.append(f"{doc}:{line_of(word)}: path `{word}` in a command does not exist")
    for m in list(CRATE.finditer(prose)) + list(PACKAGE_FLAG.finditer(text)):
        name = m.group(1)
        if name not in packages and name not in not_here:
            problems.append(f"{doc}:{line_of(name)}: crate `{name}` is not a workspace package")
    for m in BIN_FLAG.finditer(text):
        if m.group(1) not in binaries and m.group(1) not in not_here:
            problems.append(f"{doc}:{line_of(m.group(0))}: binary `{m.group(1)}` is not defined")
    return sorted(set(problems))


NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}


def number(word):
    word = word.lower()
    return int(word) if word.isdigit() else NUMBER_WORDS.get(word)


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def counted_truths():
    """(file regex, claim regex with a number group, what the number must be, what it counts)."""
    replicas = re.search(r"^\s*replicas:\s*(\d+)", read("deploy/deployment.yaml"), re.M)
    scaffold = read("codegen/src/init/templates/workspace_Cargo.toml")
    env_flags = len(re.findall(r"\benv\s*=", read("apps/image-police/src/flags.rs")))
    return [
        (r"^apps/image-police/", r"\b(\w+) replicas\b", int(replicas.group(1)) if replicas else None,
         "replicas in deploy/deployment.yaml"),
        (r".", r"\b(\w+) generated crates\b", scaffold.count('"generated/'),
         "generated crates of the init scaffold"),
        (r"^apps/image-police/src/flags\.rs$", r"\b(\w+) take their value from the environment",
         env_flags, "flags with `env =` in flags.rs"),
    ]


# Numbers a script prints when it runs: a document that states one goes stale at the next change.
PRINTED_BY_SCRIPTS = [
    (re.compile(r"kubectl-smoke[^\n]*?\b\d+\b[^\n]*?operations|\b\d+\s+(such\s+)?operations\b[^\n]*kubectl", re.I),
     "scripts/kubectl-smoke.sh prints how many operations it ran"),
]


def check_counts(path, text):
    problems = []
    flat = re.sub(r"\s+", " ", text)
    for file_re, claim_re, truth, what in counted_truths():
        if not re.search(file_re, path) or truth is None:
            continue
        for m in re.finditer(claim_re, flat, re.I):
            n = number(m.group(1))
            if n is not None and n != truth:
                problems.append(f"{path}: says \"{m.group(0)}\", but there are {truth} ({what})")
    for pattern, why in PRINTED_BY_SCRIPTS:
        for m in pattern.finditer(flat):
            problems.append(f"{path}: states a count ({m.group(0)[:60]}...): {why}; leave the number to it")
    return problems


def check_layout(text, members, packages):
    """README's layout table names every workspace member's folder and package: a crate added
    without a row is one a reader never finds."""
    problems = []
    start = text.find("## Layout")
    if start < 0:
        return ["README.md: no `## Layout` section"]
    end = text.find("\n## ", start + 1)
    table = text[start:end if end > 0 else len(text)]
    rows = [line.split("|") for line in table.splitlines() if line.startswith("| `")]
    paths = [re.findall(r"`([^`]+)`", r[1]) for r in rows if len(r) > 2]
    names = {n for r in rows if len(r) > 2 for n in re.findall(r"`([^`]+)`", r[2])}
    listed = [p.rstrip("/") for group in paths for p in group]
    for member in members:
        covered = any(member == p or (p.endswith("/*") and member.startswith(p[:-1])) for p in listed)
        if not covered:
            problems.append(f"README.md: the layout table has no row for `{member}`")
    for package in sorted(packages - names):
        problems.append(f"README.md: the layout table does not name the crate `{package}`")
    return problems


TYPE_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*$")


def rust_files(path):
    full = os.path.join(ROOT, path)
    if os.path.isdir(full):
        for root, _, names in os.walk(full):
            yield from (os.path.join(root, n) for n in names if n.endswith(".rs"))
    elif path.endswith(".rs") and os.path.exists(full):
        yield full


def check_where(path, text):
    """In a table whose last column is headed `where` or `file`, every type a row names (a
    backticked CamelCase name) is defined in the files or folders that row points to."""
    problems = []
    lines = text.split("\n")
    in_table = False
    for number, line in enumerate(lines, 1):
        if not line.startswith("|"):
            in_table = False
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[-1].lower() in ("where", "file") and len(cells) >= 2:
            in_table = True
            continue
        if not in_table or set(line) <= set("|-: "):
            continue
        places = []
        for place in (p.rstrip("/") for p in re.findall(r"`([^`]+)`", cells[-1])):
            # `crates/x/src/a.rs, b.rs`: a bare name is a sibling of the first place.
            if places and "/" not in place:
                place = os.path.join(os.path.dirname(places[0]), place)
            places.append(place)
            if place.endswith(".rs"):
                places.append(place[:-3])  # a module's folder: reflector.rs and reflector/
        if not places or not any(list(rust_files(p)) for p in places):
            continue
        names = {t for cell in cells[:-1] for t in re.findall(r"`([^`]+)`", cell)
                 for t in re.findall(r"\b[A-Z][A-Za-z0-9]*\b", t.split("::")[-1]) if TYPE_NAME.match(t)}
        # The kubegen column only: the first names client-go's types.
        ours = {t for t in re.findall(r"`([^`]+)`", cells[-2]) for t in [t.split("<")[0].split("::")[0]]
                if TYPE_NAME.match(t)} if len(cells) >= 3 else names
        sources = [open(f, encoding="utf-8").read() for p in places for f in rust_files(p)]
        for name in sorted(ours):
            defined = re.compile(rf"\b(struct|enum|trait|type)\s+{name}\b|\bimpl\b[^{{;]*\b{name}\b")
            if not any(defined.search(src) for src in sources):
                problems.append(f"{path}:{number}: `{name}` is not defined in {', '.join(places)}")
    return problems


GIT_TAG = re.compile(r"--tag\s+([^\s`<>]+)|\btag\s*=\s*\"([^\"<>]+)\"")


def check_tags(path, text, tags):
    """A release tag a document names (`--tag v0.1.0`, `tag = "v0.1.0"`) exists."""
    problems = []
    for m in GIT_TAG.finditer(text):
        tag = m.group(1) or m.group(2)
        if tag not in tags:
            problems.append(f"{path}: names the tag `{tag}`, which this repository does not have")
    return problems


def top_level_dirs():
    return {e for e in os.listdir(ROOT) if os.path.isdir(os.path.join(ROOT, e)) and not e.startswith(".")} - {"target"}


def main():
    packages, binaries, _ = workspace()
    top_dirs = top_level_dirs()
    problems = []
    for doc in markdown_files():
        text = read(doc)
        problems += check(doc, text, packages, binaries, top_dirs)
        problems += check_counts(doc, text)
    problems += check_counts("apps/image-police/src/flags.rs", read("apps/image-police/src/flags.rs"))
    _, _, members = workspace()
    problems += check_layout(read("README.md"), members, packages)
    tags = set(subprocess.run(["git", "tag"], cwd=ROOT, capture_output=True, text=True).stdout.split())
    for doc in markdown_files():
        problems += check_tags(doc, read(doc), tags)
        problems += check_where(doc, read(doc))
    served = served_kinds(ROOT)
    for doc in markdown_files():
        problems += check_claims(doc, read(doc), ROOT, served)
    for member in members:
        manifest = os.path.join(member, "Cargo.toml")
        with open(os.path.join(ROOT, manifest), "rb") as f:
            description = tomllib.load(f)["package"].get("description", "")
        problems += check_claims(manifest, description, ROOT, served)
    if "--flags" in sys.argv:
        from verify_docs_flags import check_flags
        for doc in markdown_files():
            problems += check_flags(doc, read(doc), binaries_of(packages))
    for p in problems:
        print(p)
    if problems:
        print(f"verify-docs: {len(problems)} broken reference(s)")
        return 1
    print("verify-docs: every path, crate and binary the documents name exists")
    return 0


def self_test():
    packages, binaries, _ = workspace()
    top = top_level_dirs()
    doc = "docs/example.md"
    cases = [
        ("`crates/no-such-crate/src/lib.rs`", 1),
        ("see [the design](../README.md)", 0),
        ("see [gone](../nowhere/README.md)", 1),
        ("`hack/verify-docs.py`", 0),
        ("`kubegen-no-such-crate`", 1),
        ("`kubegen-client`", 0),
        ("```sh\ncargo run -p kubegen-nothing\n```", 1),
        ("```sh\ncargo run --bin no-such-binary\n```", 1),
        ("```sh\nscripts/no-such-script.sh\n```", 1),
        ("`tools/cache/delta_fifo.go`", 0),
        ("`operator/src/lib.rs` <!-- verify-docs: not-here operator/src/lib.rs -->", 0),
        ("`src/reflector.rs` <!-- verify-docs: base crates/cache -->", 0),
        ("`src/reflector.rs`", 1),
        ("`apis/<group>/<version>/`", 0),
        ("```yaml\napiVersion: apps/v1\n```", 0),
        ("`apps/no-such-app/`", 1),
        ("![a plot](img/no-such-plot.svg)", 1),
    ]
    failed = 0
    for text, want in cases:
        got = len(check(doc, text, packages, binaries, top))
        if got != want:
            failed += 1
            print(f"self-test: {text!r}: {got} problem(s), want {want}")
    members = workspace()[2]
    layout = "## Layout\n\n| path | crate | job |\n|---|---|---|\n" + "".join(
        f"| `{m}` | `{n}` | x |\n" for m, n in zip(members, sorted(packages)))
    layout_cases = [
        (layout, 0),
        (layout.replace(f"| `{members[-1]}` |", "| `elsewhere` |"), 1),
    ]
    for text, want in layout_cases:
        got = len(check_layout(text, members, packages))
        if got != want:
            failed += 1
            print(f"self-test: layout: {got} problem(s), want {want}")
    for text, want in [("cargo install --git <repo> --tag v0.1.0 kubegen-codegen", 1),
                       ("`{ git = \"...\", tag = \"<tag>\" }`", 0)]:
        got = len(check_tags("docs/example.md", text, set()))
        if got != want:
            failed += 1
            print(f"self-test: tags {text!r}: {got} problem(s), want {want}")
    where_cases = [
        ("| client-go | kubegen | where |\n|---|---|---|\n| exec | `ExecConfig` | `crates/client/src/config/kubeconfig.rs` |\n", 0),
        ("| client-go | kubegen | where |\n|---|---|---|\n| exec | `ExecConfig` | `crates/client/src/config/exec.rs` |\n", 1),
    ]
    for text, want in where_cases:
        got = len(check_where("README.md", text))
        if got != want:
            failed += 1
            print(f"self-test: where {text[-70:]!r}: {got} problem(s), want {want}")
    count_cases = [
        ("README.md", "`scripts/kubectl-smoke.sh` runs 48 such operations", 1),
        ("README.md", "`scripts/kubectl-smoke.sh` runs such operations", 0),
        ("apps/image-police/README.md", "Two replicas, one active", 1),
        ("codegen/README.md", "the workspace and the four generated crates", 1),
        ("codegen/README.md", "the workspace and the five generated crates", 0),
        ("apps/image-police/src/flags.rs", "//! Two take their value from the environment", 1),
    ]
    for path, text, want in count_cases:
        got = len(check_counts(path, text))
        if got != want:
            failed += 1
            print(f"self-test: counts {path} {text!r}: {got} problem(s), want {want}")
    failed += claims_self_test(ROOT)
    if "--flags" in sys.argv:
        from verify_docs_flags import check_flags, flags_of
        bins = binaries_of(packages)
        table = "<!-- verify-docs: flags image-police -->\n| flag | what |\n|---|---|\n" + "".join(
            f"| `{flag}` | x |\n" for flag in sorted(flags_of("image-police", None, bins))
            if flag not in ("--help", "--version"))
        flag_cases = [
            (table, 0),
            (table.replace("| `--sharding-selection` | x |\n", ""), 1),
            (table + "| `--no-such-flag` | x |\n", 1),
            ("```sh\nkubegen init shop --group shop.example.com --kind Order\n```", 1),
            ("```sh\nkubegen init shop --group shop.example.com --kind Order --runtime-path ../kubegen\n```", 0),
            ("`image-police --embedded --no-such-flag`", 1),
            ("```sh\ncargo run -p kubegen-controller --bin image-police -- --embedded\n```", 0),
            ("`kubegen-testserver nodes --kubeconfig FILE`", 0),
            ("`kubegen-testserver nodes --no-such-flag`", 1),
            ("`kubegen-testserver --kubeconfig FILE`", 1),
        ]
        for text, want in flag_cases:
            got = len(check_flags("docs/example.md", text, bins))
            if got != want:
                failed += 1
                print(f"self-test: flags {text[-80:]!r}: {got} problem(s), want {want}")
    print("verify-docs self-test:", "failed" if failed else "ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(self_test() if "--self-test" in sys.argv else main())
