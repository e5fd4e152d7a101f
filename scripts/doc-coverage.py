#!/usr/bin/env python3
"""Every public symbol of a module (Imago by default; `doc-coverage.py DIR MODULE`) has a doc
comment: reads the symbol graphs `make docs` emits and lists the public symbols without one,
failing if there is any. A member that implements a protocol
requirement (Imago's own or the standard library's: `hash(into:)`, `==`, `description`, …) takes
the requirement's documentation, as DocC shows it, and is not listed; neither is a member that
another package's extension adds to one of the module's types."""
import glob, json, sys

directory = sys.argv[1]
module = sys.argv[2] if len(sys.argv) > 2 else "Imago"
graphs = [json.load(open(f)) for f in glob.glob(f"{directory}/{module}.symbols.json") + glob.glob(f"{directory}/{module}@*.symbols.json")]
if not graphs:
    sys.exit(f"no symbol graph for {module} in {directory}")
inherited = {"hash(into:)", "hashValue", "==(_:_:)", "<(_:_:)", "description", "debugDescription", "rawValue", "init(rawValue:)", "id",
             "errorDescription", "failureReason", "recoverySuggestion", "helpAnchor", "makeIterator()", "next()"}
symbols = {}
for graph in graphs:
    for symbol in graph["symbols"]:
        symbols[symbol["identifier"]["precise"]] = symbol
    for relation in graph["relationships"]:
        if relation["kind"] in ("requirementOf", "optionalRequirementOf") and relation["source"] in symbols:
            inherited.add(symbols[relation["source"]]["pathComponents"][-1])
total, missing = 0, []
for symbol in symbols.values():
    if symbol.get("accessLevel") not in ("public", "open") or "location" not in symbol:
        continue
    # Members another package's extension gives a type of ours (swift-algorithms' `scan` on a
    # Sequence) are documented there.
    if f"/Sources/{module}/" not in symbol["location"]["uri"]:
        continue
    path = symbol["pathComponents"]
    if any(part.startswith("_") for part in path):
        continue
    total += 1
    is_requirement = any(r["kind"] in ("requirementOf", "optionalRequirementOf") and r["source"] == symbol["identifier"]["precise"]
                         for g in graphs for r in g["relationships"])
    if symbol.get("docComment") or (len(path) > 1 and path[-1] in inherited and not is_requirement):
        continue
    location = symbol["location"]
    missing.append(f"{location['uri'].split('/Sources/')[-1]}:{location['position']['line'] + 1}: {'.'.join(path)}")
for line in sorted(missing):
    print(line)
print(f"{module}: {total} public symbols, {len(missing)} without a doc comment")
sys.exit(1 if missing else 0)
