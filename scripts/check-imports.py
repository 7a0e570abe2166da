#!/usr/bin/env python3
"""Finds import circles between the files of each crate and between the crates.

Usage: scripts/check-imports.py [--allowlist FILE] [--update-allowlist] [--edges] [ROOT]

A circle is a strongly connected component of more than one node: a set of files (or crates)
in which every member reaches every other by imports. Each is printed with its files and the
import lines that close it, so it can be cut.

File-level edges, per crate (from `src/lib.rs` and `src/main.rs`, following `mod x;`):
  * `use crate::…`, `use super::…`, `use self::…`, and `use child::…` of a child module;
  * paths in code that start with `crate::`, `super::`, `self::`, a child module's name or a
    module brought into scope by `use` (`use crate::world; … world::select::run()`);
  * a child using its parent's items (`use super::*`, `super::Thing`) is an edge child → parent;
  * a module using its own descendants (`use step::Step`, `pytest::parse(…)` in `parsers/mod.rs`)
    is not: a parent declares, re-exports and composes its parts (`mod x;` is not an import
    either). `--strict` counts those edges too, to see what a rule without that exception
    would find; it is a report (exit 0, no allowlist).
  * a path through a re-export (`pub use step::Usage` in `trajectory/mod.rs`) is followed to
    the file that defines the item, so `super::Usage` from `subagent.rs` is an edge to `step.rs`;
  * a `pub use` itself is an edge only if its name is also used in the file's own code (a
    re-export that only forwards a name is not the file using it).
  * a path in an attribute's string (`#[serde(skip_serializing_if = "crate::x::f")]`).
  Not edges: a parent declaring its child (`mod x;`), paths in comments, doc links and other
  string literals, `$crate` in macros, other crates' paths, and a file referring to itself.
  `#[cfg(test)]` code counts like any other code.

Command edges: in the binary, a file under `crates/swerve/src/commands/<x>` (or
`commands/<x>.rs`) that imports a file of another command `<y>` fails the check: what two
commands share belongs in a library crate or in a shared module of the binary outside
`commands/` (the terminal display, `batch`, `cluster`). `commands/mod.rs` dispatches to
every command and is exempt.

Crate-level edges: the `[dependencies]`, `[build-dependencies]` and `[target.*.dependencies]`
of each `crates/*/Cargo.toml` that name another workspace crate. `[dev-dependencies]` are not
counted: a test-support crate that depends on the crate it tests is the usual shape and Cargo
allows it.

The allowlist (default `scripts/import-circles-allowed.txt`) names circles inside the binary
crate (`crates/swerve/src`) that are known and being removed; one circle per line, its files
separated by spaces, `#` comments. It may only shrink: the check fails on a circle that is not
listed, on a listed circle that grew or shrank (the line must then be replaced by the circle
as found), on a listed circle that is gone (the line must be deleted), and on any line outside
`crates/swerve/src`. `--update-allowlist` rewrites it to the circles found, but refuses to add
a circle or let one grow. Every allowed circle is printed on each run.

Exit status: 0 when every circle found is allowed, 1 otherwise, 2 on bad usage or input.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

BINARY_SRC = "crates/swerve/src/"
COMMANDS_SRC = BINARY_SRC + "commands/"


def command_of(path: str) -> str | None:
    """The command a file of the binary belongs to (`commands/<x>.rs` or `commands/<x>/…`),
    or None outside `commands/` and for `commands/mod.rs`."""
    if not path.startswith(COMMANDS_SRC):
        return None
    rest = path[len(COMMANDS_SRC):]
    if rest == "mod.rs":
        return None
    return rest.split("/", 1)[0].removesuffix(".rs")
DEFAULT_ALLOWLIST = "scripts/import-circles-allowed.txt"
ATTRIBUTE_PATH = re.compile(r'=\s*"((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+)"')
ITEM_KEYWORDS = {"fn", "struct", "enum", "trait", "type", "const", "static", "union", "mod"}


# ---------------------------------------------------------------------------------------------
# Lexing: Rust source → tokens with line numbers, comments and literals dropped.


def strip(text: str) -> str:
    """Blanks comments, string and char literals, keeping newlines so lines still count."""
    out: list[str] = []
    i, n = 0, len(text)

    def blank(s: str) -> str:
        return "".join(c if c == "\n" else " " for c in s)

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(blank(text[i:j]))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(blank(text[i:j]))
            i = j
        elif (m := re.compile(r'b?r(#*)"').match(text, i)) and (
            i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")
        ):
            end = '"' + m.group(1)
            j = text.find(end, m.end())
            j = n if j < 0 else j + len(end)
            out.append(" " + blank(text[i + 1 : j]))
            i = j
        elif c == '"' or (c == "b" and text.startswith('b"', i) and not _ident_before(text, i)):
            j = i + (2 if c == "b" else 1)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(blank(text[i : j + 1]))
            i = j + 1
        elif c == "'":
            # A char literal ('x', '\n', '\u{1F600}') or a lifetime ('a, 'static).
            if text.startswith("\\", i + 1):
                j = text.find("'", i + 2)
                j = n if j < 0 else j + 1
                out.append(blank(text[i:j]))
                i = j
            elif i + 2 < n and text[i + 2] == "'":
                out.append("   ")
                i += 3
            elif i + 1 < n and ord(text[i + 1]) > 127:
                j = text.find("'", i + 1)
                j = n if j < 0 or j - i > 6 else j + 1
                out.append(blank(text[i:j]))
                i = j
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def fail(message: str) -> NoReturn:
    """Stops on bad usage or input (exit status 2)."""
    print(f"check-imports: {message}", file=sys.stderr)
    sys.exit(2)


def _ident_before(text: str, i: int) -> bool:
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")


TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|::|\$|[{}();,*#!\[\]]|\n|.", re.S)


@dataclass
class Token:
    text: str
    line: int


def tokens(text: str) -> list[Token]:
    out, line = [], 1
    for m in TOKEN.finditer(strip(text)):
        t = m.group(0)
        if t == "\n":
            line += 1
        elif not t.isspace():
            out.append(Token(t, line))
    return out


# ---------------------------------------------------------------------------------------------
# Modules: the tree of one crate, with what each module defines, imports and re-exports.


@dataclass
class Use:
    """One leaf of a `use` tree, as written in module `module` of `file`."""

    segments: list[str]
    alias: str | None  # the local name, None for a glob
    public: bool
    line: int


@dataclass
class Reference:
    """A path in code (or a `use` leaf) that may point at another file."""

    segments: list[str]
    line: int
    text: str


@dataclass
class Module:
    path: tuple[str, ...]
    file: Path
    parent: Module | None
    dir: Path  # where its `mod x;` children live
    children: dict[str, Module] = field(default_factory=dict)
    items: set[str] = field(default_factory=set)
    uses: list[Use] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    idents: set[str] = field(default_factory=set)  # identifiers in code outside `use`


class Crate:
    def __init__(self, root_file: Path, repo: Path):
        self.repo = repo
        self.modules: list[Module] = []
        self.root = self._load(root_file, (), None, root_file.parent)

    def _load(self, file: Path, path: tuple[str, ...], parent: Module | None, dir: Path) -> Module:
        module = Module(path, file, parent, dir)
        self.modules.append(module)
        text = file.read_text()
        self._parse(tokens(text), module)
        # Paths named in attribute strings, e.g. `#[serde(skip_serializing_if = "crate::x::f")]`.
        for number, line in enumerate(text.splitlines(), 1):
            if line.lstrip().startswith("#["):
                for m in ATTRIBUTE_PATH.finditer(line):
                    module.references.append(Reference(m.group(1).split("::"), number, m.group(1)))
        return module

    def _declare(self, module: Module, name: str, line: int) -> None:
        for candidate in (module.dir / f"{name}.rs", module.dir / name / "mod.rs"):
            if candidate.exists():
                child_dir = candidate.parent if candidate.name == "mod.rs" else module.dir / name
                module.children[name] = self._load(
                    candidate, module.path + (name,), module, child_dir
                )
                return
        rel = module.file.relative_to(self.repo)
        fail(f"{rel}:{line}: `mod {name};` names no file")

    def _parse(self, toks: list[Token], module: Module) -> None:
        stack: list[Module | None] = []  # one entry per open brace; a Module for `mod x {`
        current = module
        i, n = 0, len(toks)
        while i < n:
            t = toks[i].text
            if t == "mod" and i + 2 < n and toks[i + 2].text in (";", "{"):
                name = toks[i + 1].text
                current.items.add(name)
                if toks[i + 2].text == ";":
                    self._declare(current, name, toks[i].line)
                    i += 3
                else:
                    inline = Module(
                        current.path + (name,), current.file, current, current.dir / name
                    )
                    current.children[name] = inline
                    self.modules.append(inline)
                    stack.append(inline)
                    current = inline
                    i += 3
                continue
            if t == "{":
                stack.append(None)
            elif t == "}":
                if stack and stack.pop() is not None:
                    current = current.parent or module
            elif t == "use" and not (i > 0 and toks[i - 1].text == "$"):
                public = _is_public(toks, i)
                j = _end_of_statement(toks, i)
                for segments, alias in _use_leaves([x.text for x in toks[i + 1 : j]]):
                    current.uses.append(Use(segments, alias, public, toks[i].line))
                i = j + 1
                continue
            elif t in ITEM_KEYWORDS or t == "macro_rules":
                k = i + 1 + (t == "macro_rules")
                if k < n and _is_ident(toks[k].text):
                    current.items.add(toks[k].text)
            if _is_ident(t) and not (i > 0 and toks[i - 1].text in ("$", "::")):
                j = i
                segments = [t]
                while j + 2 < n and toks[j + 1].text == "::" and _is_ident(toks[j + 2].text):
                    segments.append(toks[j + 2].text)
                    j += 2
                if len(segments) > 1:
                    current.references.append(
                        Reference(segments, toks[i].line, "::".join(segments))
                    )
                current.idents.update(segments[:1])
                i = j + 1
                continue
            i += 1


def _is_ident(t: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", t))


def _is_public(toks: list[Token], i: int) -> bool:
    j = i - 1
    if j >= 0 and toks[j].text == ")":
        while j >= 0 and toks[j].text != "(":
            j -= 1
        j -= 1
    return j >= 0 and toks[j].text == "pub"


def _end_of_statement(toks: list[Token], i: int) -> int:
    j = i
    while j < len(toks) and toks[j].text != ";":
        j += 1
    return j


def _use_leaves(words: list[str]) -> list[tuple[list[str], str | None]]:
    """Flattens a use tree (`a::{b, c::{self, d as e}, f::*}`) into (path, local name) pairs."""
    leaves: list[tuple[list[str], str | None]] = []

    def tree(pos: int, prefix: list[str]) -> int:
        path = list(prefix)
        while pos < len(words):
            w = words[pos]
            if w == "::":
                pos += 1
            elif w == "{":
                pos += 1
                while pos < len(words) and words[pos] != "}":
                    pos = tree(pos, path)
                    if pos < len(words) and words[pos] == ",":
                        pos += 1
                return pos + 1
            elif w == "*":
                leaves.append((path, None))
                return pos + 1
            elif w in (",", "}"):
                break
            elif w == "as":
                alias = words[pos + 1]
                leaves.append((path, None if alias == "_" else alias))
                return pos + 2
            else:
                path.append(w)
                pos += 1
        if path and path != prefix:
            if path[-1] == "self":
                path = path[:-1]
            leaves.append((path, path[-1] if path else None))
        return pos

    tree(0, [])
    return leaves


# ---------------------------------------------------------------------------------------------
# Resolution: a path, read in a module, to the file that defines what it names.


def _walk(crate: Crate, module: Module, segments: list[str], depth: int = 0) -> Module | None:
    """The module a path's leading segments name (`crate`, `super`, children, `use` aliases)."""
    first = segments[0]
    if first == "crate":
        start: Module | None = crate.root
    elif first == "super":
        start = module.parent
    elif first == "self":
        start = module
    elif first in module.children:
        start = module.children[first]
    else:
        start = _alias(crate, module, first, depth)
    return start


def _alias(crate: Crate, module: Module, name: str, depth: int) -> Module | None:
    """The module that `use … as name` / `use …::name` brought into scope in `module`, if any."""
    if depth > 8:
        return None
    for use in module.uses:
        if use.alias == name and use.segments and use.segments[0] in (
            "crate",
            "super",
            "self",
            *module.children,
        ):
            target = _resolve(crate, module, use.segments, depth + 1)
            if isinstance(target, Module):
                return target
    return None


def _resolve(crate: Crate, module: Module, segments: list[str], depth: int = 0):
    """The Module a path names, or the Module whose file defines the item it names, or None."""
    if not segments or depth > 8:
        return None
    current = _walk(crate, module, segments, depth)
    if current is None:
        return None
    rest = segments[1:]
    while rest:
        seg = rest[0]
        if seg == "super":
            if current.parent is None:
                return None
            current = current.parent
        elif seg == "self":
            pass
        elif seg in current.children:
            current = current.children[seg]
        else:
            return _item(crate, current, seg, depth) or current
        rest = rest[1:]
    return current


def _item(crate: Crate, module: Module, name: str, depth: int) -> Module | None:
    """Where `module::name` is defined: through its re-exports, or the module itself."""
    if name in module.items:
        return None
    for use in module.uses:
        if use.public and use.alias == name:
            target = _resolve(crate, module, use.segments, depth + 1)
            return target if isinstance(target, Module) else None
    for use in module.uses:
        if use.public and use.alias is None and use.segments:
            glob = _resolve(crate, module, use.segments, depth + 1)
            if isinstance(glob, Module) and glob is not module:
                found = _item(crate, glob, name, depth + 1)
                if found is not None or name in glob.items:
                    return found or glob
    return None


def _is_ancestor(module: Module, target: Module) -> bool:
    node = target.parent
    while node is not None:
        if node.file == module.file:
            return True
        node = node.parent
    return False


@dataclass
class Edge:
    source: Path
    target: Path
    line: int
    text: str


def file_edges(crate: Crate, strict: bool = False) -> list[Edge]:
    """Every import edge between two files of `crate` (see the module doc for which count)."""
    edges: list[Edge] = []
    for module in crate.modules:
        reexported = set()
        for use in module.uses:
            if use.public and use.alias is not None and use.alias not in module.idents:
                reexported.add(id(use))
        seen_refs = [(u.segments, u.line, "use " + "::".join(u.segments) + ("" if u.alias else "::*"))
                     for u in module.uses if id(u) not in reexported]
        seen_refs += [(r.segments, r.line, r.text) for r in module.references]
        for segments, line, text in seen_refs:
            if not segments:
                continue
            target = _resolve(crate, module, segments)
            if isinstance(target, Module) and target.file != module.file:
                if not strict and _is_ancestor(module, target):
                    continue
                edges.append(Edge(module.file, target.file, line, text))
    return edges


# ---------------------------------------------------------------------------------------------
# Graphs.


def circles(nodes: list, edges: dict) -> list[list]:
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict = {}
    low: dict = {}
    on_stack: set = set()
    stack: list = []
    found: list[list] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, ())))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def crate_roots(repo: Path) -> list[Path]:
    roots = []
    for manifest in sorted(repo.glob("crates/*/Cargo.toml")):
        for name in ("lib.rs", "main.rs"):
            root = manifest.parent / "src" / name
            if root.exists():
                roots.append(root)
    return roots


def crate_graph(repo: Path) -> tuple[list[str], dict[str, set[str]], dict[tuple[str, str], str]]:
    manifests = {}
    for path in sorted(repo.glob("crates/*/Cargo.toml")):
        try:
            manifests[path] = tomllib.loads(path.read_text())
        except tomllib.TOMLDecodeError as error:
            fail(f"{path.relative_to(repo)}: {error}")
    names = {m["package"]["name"] for m in manifests.values()}
    edges: dict[str, set[str]] = {}
    where: dict[tuple[str, str], str] = {}
    for path, manifest in manifests.items():
        name = manifest["package"]["name"]
        tables = [("dependencies", manifest.get("dependencies", {})),
                  ("build-dependencies", manifest.get("build-dependencies", {}))]
        for target, spec in manifest.get("target", {}).items():
            for kind in ("dependencies", "build-dependencies"):
                tables.append((f"target.{target}.{kind}", spec.get(kind, {})))
        for table_name, table in tables:
            for key, spec in table.items():
                dep = spec.get("package", key) if isinstance(spec, dict) else key
                if dep in names:
                    edges.setdefault(name, set()).add(dep)
                    where[(name, dep)] = f"{path.relative_to(repo)} [{table_name}] {key}"
    return sorted(names), edges, where


# ---------------------------------------------------------------------------------------------
# The allowlist and the report.


def read_allowlist(path: Path, repo: Path) -> list[frozenset[str]]:
    if not path.exists():
        return []
    entries = []
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        files = frozenset(line.split())
        outside = sorted(f for f in files if not f.startswith(BINARY_SRC))
        if outside:
            fail(
                f"{path.relative_to(repo)}:{number}: only circles inside "
                f"{BINARY_SRC} may be allowed; remove {', '.join(outside)}"
            )
        entries.append(files)
    return entries


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", nargs="?", default=Path(__file__).resolve().parent.parent,
                        type=Path, help="the workspace root (default: this script's repository)")
    parser.add_argument("--allowlist", type=Path, help=f"default: ROOT/{DEFAULT_ALLOWLIST}")
    parser.add_argument("--update-allowlist", action="store_true",
                        help="rewrite the allowlist to the circles found, if none is new or grew")
    parser.add_argument("--edges", action="store_true", help="print every file-level edge")
    parser.add_argument("--strict", action="store_true",
                        help="also count a module using its own descendants; report only, "
                        "exit 0, no allowlist")
    args = parser.parse_args()
    repo: Path = args.root.resolve()
    allow_path = args.allowlist or repo / DEFAULT_ALLOWLIST

    def rel(p: Path) -> str:
        return str(p.relative_to(repo))

    found: list[tuple[list[str], list[Edge]]] = []
    command_edges: list[str] = []
    file_count = 0
    for root in crate_roots(repo):
        crate = Crate(root, repo)
        file_count += len({m.file for m in crate.modules})
        edges = file_edges(crate, args.strict)
        graph: dict[str, set[str]] = {}
        for e in edges:
            graph.setdefault(rel(e.source), set()).add(rel(e.target))
            source, target = command_of(rel(e.source)), command_of(rel(e.target))
            if source and target and source != target:
                command_edges.append(f"{rel(e.source)}:{e.line} -> {rel(e.target)}  ({e.text})")
            if args.edges:
                print(f"{rel(e.source)}:{e.line} -> {rel(e.target)}  ({e.text})")
        files = sorted({rel(m.file) for m in crate.modules})
        for component in circles(files, graph):
            members = set(component)
            inside = [e for e in edges if rel(e.source) in members and rel(e.target) in members]
            found.append((component, inside))

    names, crate_edges, where = crate_graph(repo)
    crate_circles = circles(names, crate_edges)

    # A strict run is a report: its extra circles are not what the allowlist describes.
    allowed = [] if args.strict else read_allowlist(allow_path, repo)
    failures = 0
    matched: set[frozenset[str]] = set()
    kept: list[list[str]] = []
    for component, inside in found:
        key = frozenset(component)
        if key in allowed:
            status = "allowed"
            matched.add(key)
            kept.append(component)
        elif args.strict:
            status = "strict"
        else:
            bigger = [a for a in allowed if key < a]
            if bigger:
                status = "SHRANK (replace its allowlist line with these files)"
                matched.update(bigger)
                kept.append(component)
            elif any(a < key for a in allowed):
                status = "GREW (not allowed: cut the new imports)"
            elif any(a & key for a in allowed):
                status = "CHANGED (not allowed: it holds files its allowlist line does not name)"
            else:
                status = "NEW"
            failures += 1
        print(f"import circle, {status}: {len(component)} files")
        for f in component:
            print(f"    {f}")
        shown = set()
        for e in sorted(inside, key=lambda e: (rel(e.source), e.line)):
            pair = (e.source, e.target)
            if pair in shown:
                continue
            shown.add(pair)
            print(f"      {rel(e.source)}:{e.line} -> {rel(e.target)}  ({e.text})")
    stale = [a for a in allowed if a not in matched]
    for entry in stale:
        print("allowed import circle is GONE (delete its allowlist line): " + " ".join(sorted(entry)))
        failures += 1
    for edge in command_edges:
        print("command imports another command (move what they share out of commands/): " + edge)
        failures += 1
    for component in crate_circles:
        print("crate circle, NEW: " + ", ".join(component))
        for a in component:
            for b in sorted(crate_edges.get(a, ())):
                if b in component:
                    print(f"      {where[(a, b)]}")
        failures += 1

    if args.update_allowlist:
        grown = [c for c, _ in found if frozenset(c) not in allowed
                 and not any(frozenset(c) < a for a in allowed)]
        if grown:
            print("check-imports: not updating the allowlist: a circle is new or grew", file=sys.stderr)
            return 1
        header = [l for l in (allow_path.read_text().splitlines() if allow_path.exists() else [])
                  if l.startswith("#")]
        allow_path.write_text("\n".join(header + [" ".join(c) for c in kept]) + "\n")
        print(f"check-imports: wrote {len(kept)} circles to {rel(allow_path)}")
        return 0

    if args.strict:
        print(f"check-imports --strict: {len(found)} file circles, {len(crate_circles)} crate "
              "circles, counting a module's use of its own children (report only)")
        return 0
    allowed_now = sum(frozenset(c) in allowed for c, _ in found)
    print(f"check-imports: {file_count} files in {len(crate_roots(repo))} crate roots, "
          f"{len(names)} crates: {len(found)} file circles ({allowed_now} allowed), "
          f"{len(crate_circles)} crate circles, {len(command_edges)} command-to-command imports")
    if failures:
        print(f"check-imports: {failures} problems; see {allow_path.relative_to(repo)} and "
              "docs/development.md")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
