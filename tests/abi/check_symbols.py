#!/usr/bin/env python3
"""Checks that libtidal.so exports exactly the symbols its version script names.

usage: check_symbols.py LIBRARY SYMBOL_MAP [--nm NM] [--header HEADER ...]

Compares the dynamic symbols LIBRARY defines (`nm -D --defined-only`) with the global names
of SYMBOL_MAP (api/tidal.sym). Every exported name must be listed, every listed name
exported, and each bound to one of the map's version nodes (so the library was really
linked with the script). With --header, every function a public header declares with
TIDAL_API must be listed in the map too, and nothing else. Exits 1 listing each difference.
"""

import argparse
import re
import subprocess
import sys


def read_symbol_map(path):
    """Returns (node names, global symbol names) of a GNU ld version script."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"(#|//)[^\n]*", " ", text)

    nodes = set()
    globals_ = set()
    # NODE { global: a; b; local: *; } [PARENT];
    for match in re.finditer(r"([A-Za-z_][A-Za-z0-9_.]*)\s*\{(.*?)\}\s*[A-Za-z0-9_.]*\s*;",
                             text, flags=re.S):
        nodes.add(match.group(1))
        section = None
        for token in re.split(r"\s*;\s*|\s+", match.group(2)):
            if not token:
                continue
            if token.endswith(":"):
                section = token[:-1]
                continue
            if ":" in token:  # "global:name" written without a space
                section, token = token.split(":", 1)
                if not token:
                    continue
            if section in (None, "global"):
                if any(ch in token for ch in "*?["):
                    raise SystemExit(f"{path}: wildcard '{token}' in a global section: "
                                     "list exported names one by one")
                globals_.add(token)
    if not nodes:
        raise SystemExit(f"{path}: no version node found")
    return nodes, globals_


def read_exports(nm, library):
    """Returns {name: version or None} of the symbols the library defines."""
    try:
        result = subprocess.run([nm, "-D", "--defined-only", library], check=True,
                                capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as error:
        stderr = getattr(error, "stderr", "") or ""
        raise SystemExit(f"cannot run {nm} on {library}: {error} {stderr}".strip())
    exports = {}
    for line in result.stdout.splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        kind, name = fields[-2], fields[-1]
        version = None
        if "@" in name:
            name, _, version = name.partition("@")
            version = version.lstrip("@")
        exports[name] = (kind, version)
    return exports


def read_header_functions(path):
    """Names of the functions a header declares with TIDAL_API."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    # Preprocessor lines (the TIDAL_API definition itself among them) declare nothing.
    text = text.replace("\\\n", " ")
    text = re.sub(r"^[ \t]*#[^\n]*", " ", text, flags=re.M)
    names = set()
    for declaration in re.finditer(r"\bTIDAL_API\b([^;{]*?)\(", text):
        words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", declaration.group(1))
        if words:
            names.add(words[-1])
    return names


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library")
    parser.add_argument("symbol_map")
    parser.add_argument("--nm", default="nm")
    parser.add_argument("--header", action="append", default=[])
    args = parser.parse_args(argv)

    nodes, listed = read_symbol_map(args.symbol_map)
    exports = read_exports(args.nm, args.library)

    problems = []
    exported = set()
    for name, (kind, version) in sorted(exports.items()):
        # The version nodes themselves appear as absolute symbols.
        if kind == "A" and name in nodes:
            continue
        exported.add(name)
        if name not in listed:
            problems.append(f"exported but not in {args.symbol_map}: {name}"
                            + (f"@{version}" if version else ""))
        elif version is None:
            problems.append(f"exported without a version node (linked without the script?): "
                            f"{name}")
        elif version not in nodes:
            problems.append(f"exported with version {version}, which {args.symbol_map} does "
                            f"not define: {name}")
    for name in sorted(listed - exported):
        problems.append(f"listed in {args.symbol_map} but not exported: {name}")

    if args.header:
        declared = set()
        for header in args.header:
            declared |= read_header_functions(header)
        headers = ", ".join(args.header)
        for name in sorted(declared - listed):
            problems.append(f"declared TIDAL_API in {headers} but not in {args.symbol_map}: "
                            f"{name}")
        for name in sorted(listed - declared):
            problems.append(f"listed in {args.symbol_map} but declared in none of {headers}: "
                            f"{name}")

    if problems:
        print(f"{args.library}: {len(problems)} difference(s) from {args.symbol_map}:")
        for problem in problems:
            print(f"  {problem}")
        return 1
    print(f"{args.library}: exports exactly the {len(listed)} symbols of {args.symbol_map}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
