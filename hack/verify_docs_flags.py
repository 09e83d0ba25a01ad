"""The flags half of hack/verify-docs.py (its `--flags` mode): what the documents say of the
workspace binaries' flags, against what each binary's `--help` says. Separate because it needs
the binaries built; `.ci/run` runs it after the tests built them.
"""
import json
import os
import re
import subprocess

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
FLAG = re.compile(r"(?<![\w-])--[a-z0-9][a-z0-9-]*")
TABLE_DIRECTIVE = re.compile(r"<!-- verify-docs: flags ([\w-]+)(?: ([\w-]+))? -->")
# `cargo run -p PKG --bin NAME -- ARGS` and `cargo run -p PKG -- ARGS` (one binary).
CARGO_RUN = re.compile(r"cargo run\b([^\n`]*?)\s--\s([^\n`]*)")
NOT_FLAGS = {"--help", "--version"}

_help_cache = {}


_target_dir = []


def binary_path(binary):
    """The debug build of `binary`: every binary is built once, with the features the tests use
    (`--workspace --all-features`), so that after the tests this builds nothing."""
    if not _target_dir:
        build = ["cargo", "build", "-q", "--workspace", "--all-features", "--bins"]
        out = subprocess.run(build, cwd=ROOT, capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"verify-docs: `{' '.join(build)}` failed:\n{out.stderr}")
        meta = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps"],
                              cwd=ROOT, capture_output=True, text=True, check=True)
        _target_dir.append(json.loads(meta.stdout)["target_directory"])
    return os.path.join(_target_dir[0], "debug", binary)


def help_text(binary, subcommand, binaries):
    """The binary's `--help` (of `subcommand`, if given)."""
    key = (binary, subcommand)
    if key not in _help_cache:
        args = [binary_path(binary)] + ([subcommand, "--help"] if subcommand else ["--help"])
        out = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"verify-docs: `{' '.join(args)}` failed:\n{out.stderr}")
        _help_cache[key] = out.stdout
    return _help_cache[key]


def flags_of(binary, subcommand, binaries):
    """The flags `--help` defines (not the ones its descriptions mention), visible aliases
    included, and clap's own `--help` and `--version`."""
    text = help_text(binary, subcommand, binaries)
    flags = set(re.findall(r"^\s+(?:-\w, )?(--[a-z0-9][a-z0-9-]*)", text, re.M))
    for aliases in re.findall(r"\[(?:short )?alias(?:es)?: ([^\]]+)\]", text):
        flags |= set(FLAG.findall(aliases))
    return flags | NOT_FLAGS


def commands_of(binary, binaries):
    """The subcommands `--help` lists under `Commands:` (clap's layout), `help` aside."""
    text = help_text(binary, None, binaries)
    section = text.split("Commands:", 1)[1].split("\n\n", 1)[0] if "Commands:" in text else ""
    return set(re.findall(r"^  ([a-z][a-z-]*)\s", section, re.M)) - {"help"}


def required_groups(binary, subcommand, binaries):
    """Alternatives the usage line requires one of: `<--runtime-git <URL>|--runtime-path <DIR>>`."""
    usage = next((line for line in help_text(binary, subcommand, binaries).splitlines()
                  if line.startswith("Usage:")), "")
    groups = []
    depth, start = 0, None
    for i, ch in enumerate(usage):
        if ch == "<":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ">":
            depth -= 1
            if depth == 0 and start is not None:
                chunk = usage[start + 1:i]
                if chunk.startswith("--"):
                    groups.append(set(FLAG.findall(chunk)))
    return groups


def tables(text):
    """(binary, subcommand, line number, flags of the table's first column) per declared table."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = TABLE_DIRECTIVE.search(line)
        if not m:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("|"):
            j += 1
        flags = set()
        while j < len(lines) and lines[j].startswith("|"):
            first = lines[j].split("|")[1]
            flags |= set(FLAG.findall(first))
            j += 1
        yield m.group(1), m.group(2), i + 1, flags


def invocations(text, binaries):
    """(binary, subcommand, args, line) for each command in the text that runs a workspace binary."""
    # A shell line continued with `\` is one command, numbered by its first line.
    lines = text.replace("\\\n", " ").split("\n")
    for number, line in enumerate(lines, 1):
        for m in CARGO_RUN.finditer(line):
            before, args = m.group(1), m.group(2)
            named = re.search(r"--bin\s+([\w-]+)", before)
            package = re.search(r"-p\s+([\w-]+)", before)
            binary = named.group(1) if named else None
            if binary is None and package:
                only = [b for b, (p, _) in binaries.items() if p == package.group(1)]
                binary = only[0] if len(only) == 1 else None
            if binary in binaries:
                yield binary, args, number
        for segment in re.split(r"`|\$\(|&&|\|\||;", line):
            words = segment.strip().split()
            if words and words[0] in binaries and "cargo" not in segment:
                yield words[0], " ".join(words[1:]), number


def check_flags(path, text, binaries):
    problems = []
    for binary, subcommand, line, listed in tables(text):
        if binary not in binaries:
            problems.append(f"{path}:{line}: flag table of `{binary}`, which is not a workspace binary")
            continue
        real = flags_of(binary, subcommand, binaries) - NOT_FLAGS
        for flag in sorted(listed - real):
            problems.append(f"{path}:{line}: the flag table lists `{flag}`, which `{binary}` does not have")
        for flag in sorted(real - listed):
            problems.append(f"{path}:{line}: the flag table of `{binary}` lacks `{flag}`")
    for binary, args, line in invocations(text, binaries):
        words = args.split()
        subcommand = words[0] if words and re.fullmatch(r"[a-z]+", words[0]) \
            and words[0] in commands_of(binary, binaries) else None
        real = flags_of(binary, subcommand, binaries)
        used = set(FLAG.findall(args))
        for flag in sorted(used - real):
            problems.append(f"{path}:{line}: `{binary}` has no flag `{flag}`")
        # A bare `kubegen init` in prose names the command; only a command line with arguments
        # must be complete.
        complete = len(words) > (1 if subcommand else 0)
        for group in required_groups(binary, subcommand, binaries) if complete else []:
            if not used & group and not re.search(r"\.\.\.|…", args):
                problems.append(
                    f"{path}:{line}: `{binary}{' ' + subcommand if subcommand else ''}` needs one of "
                    f"{', '.join(sorted(group))}")
    return problems
