"""TF 2.x programs of a repository: which scripts are entry scripts, and which mix modes.

NPU061 opens the NPU at the top of each *entry script* of a TF 2.x program (``spec/rules-tf2.md``):
the files listed in ``[tool.npu-codemod] entry`` of the repository's ``pyproject.toml``, else the
files with a module-level ``if __name__ == "__main__":`` block whose repository import closure
(followed transitively) holds TF 2.x training code. The entry itself may import no TensorFlow.
When one entry's closure holds both eager TF 2.x training files and ``tf.compat.v1`` graph files
(``enable_v1()`` switches the whole process to graph mode) the program is *mixed*: nothing in it
is rewritten, and the entry gets one finding.

The repository's analysis gives one :data:`GRAPH_FACT` per TF file and per script
(:func:`graph_fact`); :func:`program_facts` turns them, once the runtime is known, into the facts
the rules and the engine read: :data:`ENTRY_FACT` per entry, :data:`MIXED_FACT` per file of a mixed
program, :data:`DONE_FACT` (the analysis ran: without it NPU061 decides from the file alone).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional

from .modules import imported_names, module_ast, nearest_name
from .names import module_parts
from .tf_versions import RUNTIME_TF2, RUNTIME_UNKNOWN, Signals

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.9/3.10
    import tomli as tomllib

GRAPH_FACT = "tf2-graph:"
ENTRY_FACT = "tf2-entry:"
MIXED_FACT = "tf2-mixed:"
MIXED_ENTRY_FACT = "tf2-mixed-entry:"
DONE_FACT = "tf2-programs:done"
#: A ``tf-neutral`` file of a repository whose version is undetermined that belongs to its TF 1.x
#: code (:func:`tf1_neutral_files`): it gets the TF 1.x rules (the others, the TF 2.x treatment).
NEUTRAL_TF1_FACT = "tf-neutral-tf1:"
#: Text that only training code spells (NPU061's "trains").
TRAINING = re.compile(r"\bGradientTape\b|\.apply_gradients\(|\.minimize\(|\.fit\(|\.compile\(|"
                      r"@\s*(?:tf\.)?function\b|\btf\.function\(")
MAIN = re.compile(r"""^if\s+(?:__name__\s*==\s*(['"])__main__\1|(['"])__main__\2\s*==\s*__name__)\s*:""",
                  re.MULTILINE)

MIXED = ("this program mixes eager TF 2.x files ({eager}) and compat.v1 graph files ({compat}): "
         "npu_device.compat.enable_v1() switches the whole process to graph mode; port one mode "
         "(nothing in this program was rewritten)")
MIXED_PART = ("part of a program that mixes eager TF 2.x and compat.v1 graph files (entry "
              "{entry}): not rewritten; port one mode")
MIXED_TF1 = ("this program mixes eager TF 2.x files ({eager}) and TF 1.x files ({tf1}): no TensorFlow "
             "version runs both as written; pin the version and port one mode (nothing in this "
             "program was rewritten)")
NO_ENTRY = ("no entry script found: add import npu_device as npu; npu.open().as_default() at the "
            "top of the script you run, or list it in [tool.npu-codemod] entry")
BAD_ENTRY = "[tool.npu-codemod] entry must be a list of paths, got {value!r}: ignored"


@dataclass(frozen=True)
class Node:
    """One file of the graph: its path, flags, and the dotted names it imports."""

    path: str
    main: bool
    compat: bool
    trains: bool
    tf: bool
    imports: tuple[str, ...]
    tf1: bool = False  # TF 1.x-only APIs
    tf2: bool = False  # TF 2.x-only APIs or TF 2.x idioms

    def eager(self, runtime: str) -> bool:
        """Eager TF 2.x training code in a repository whose runtime is ``runtime``."""
        return self.trains and self.tf and not self.compat and not self.tf1 \
            and (runtime == RUNTIME_TF2 or self.tf2)

    @property
    def module(self) -> str:
        return ".".join(module_parts(self.path))


def graph_fact(path: str, text: str, signals: Optional[Signals]) -> Optional[str]:
    """The :data:`GRAPH_FACT` of one file (``signals``: its TF signals, None for a file that
    imports no TensorFlow), or None for a non-TF file without a ``__main__`` block."""
    main = MAIN.search(text) is not None
    if signals is None and not main:
        return None
    tree = module_ast(text)
    targets = sorted({target for target in (imported_names(tree, path).values() if tree is not None else ())
                      if target.split(".")[0] not in ("tensorflow", "__future__")})
    flags = ("m" if main else "") + ("x" if signals is not None else "")
    if signals is not None:
        flags += ("c" if signals.c1 or signals.c2 else "") + ("t" if TRAINING.search(text) else "") \
            + ("1" if signals.t1 else "") + ("2" if signals.t2 or signals.e else "")
    return f"{GRAPH_FACT}{path}|{flags}|{','.join(targets)}"


def _nodes(facts: Iterable[str]) -> dict[str, Node]:
    nodes = {}
    for fact in facts:
        if fact.startswith(GRAPH_FACT):
            path, flags, imports = fact[len(GRAPH_FACT):].rsplit("|", 2)
            node = Node(path, "m" in flags, "c" in flags, "t" in flags, "x" in flags,
                        tuple(filter(None, imports.split(","))), "1" in flags, "2" in flags)
            nodes[node.module] = node
    return nodes


@dataclass
class Program:
    """What an entry reaches: the training files that are eager TF 2.x, the compat ones."""

    eager: set[str] = field(default_factory=set)
    compat: set[str] = field(default_factory=set)
    reached: set[str] = field(default_factory=set)
    tf1: set[str] = field(default_factory=set)  # TF 1.x files, where the version is undetermined


def closure(entry: Node, nodes: Mapping[str, Node], runtime: str = RUNTIME_TF2) -> Program:
    """The files ``entry`` imports, transitively (a package imported as such counts its
    training modules: ``from retinanet import Executor`` with a re-exporting ``__init__``)."""
    known = set(nodes)
    packages = {".".join(name.split(".")[:end]) for name in known for end in range(1, name.count(".") + 1)}
    program = Program()
    todo, seen = [entry], {entry.module}
    while todo:
        node = todo.pop()
        program.reached.add(node.path)
        _classify(node, program, runtime)
        package = module_parts(node.path)[:-1]
        for target in node.imports:
            for found in _resolved(target, package, known, packages):
                if found in nodes and found not in seen:
                    seen.add(found)
                    todo.append(nodes[found])
                elif found in packages:  # a package without its own TF code: its training modules
                    for name in known:
                        if name.startswith(found + ".") and nodes[name].eager(runtime):
                            program.eager.add(nodes[name].path)
    return program


def _resolved(target: str, package: tuple[str, ...], known: set[str], packages: set[str]) -> list[str]:
    for candidate in (target, target.rpartition(".")[0]):
        if candidate:
            found = nearest_name(candidate, package, known | packages)
            if found is not None:
                return [found]
    return []


def _classify(node: Node, program: Program, runtime: str) -> None:
    if node.compat and runtime == RUNTIME_TF2:
        program.compat.add(node.path)
    elif node.eager(runtime):
        program.eager.add(node.path)
    elif node.tf and (node.tf1 or node.compat) and runtime == RUNTIME_UNKNOWN:
        program.tf1.add(node.path)


def configured_entries(pyproject: str) -> tuple[tuple[str, ...], Optional[str]]:
    """``[tool.npu-codemod] entry`` of the repository's ``pyproject.toml``: (paths, problem)."""
    if "npu-codemod" not in pyproject or "entry" not in pyproject:
        return (), None
    try:
        value = tomllib.loads(pyproject).get("tool", {}).get("npu-codemod", {}).get("entry")
    except (tomllib.TOMLDecodeError, AttributeError):
        return (), None
    if value is None:
        return (), None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return (), BAD_ENTRY.format(value=value)
    return tuple(item.lstrip("./") for item in value), None


def listed(path: str, entries: Iterable[str]) -> bool:
    """Is ``path`` (repository-relative, or under a folder ``check`` was given) one of ``entries``?"""
    return any(path == entry or path.endswith("/" + entry) for entry in entries)


def program_facts(facts: frozenset[str], runtime: str, pyproject: str = ""
                  ) -> tuple[frozenset[str], tuple[tuple[str, str], ...]]:
    """The entry and mixed-program facts of a repository, and its messages ``(path, text)``
    (mixed programs at their entry, no entry script, a bad ``entry`` setting)."""
    nodes = _nodes(facts)
    if not nodes:
        return frozenset(), ()
    entries, problem = configured_entries(pyproject)
    messages: list[tuple[str, str]] = [("pyproject.toml", problem)] if problem else []
    found = {DONE_FACT}
    if runtime not in (RUNTIME_TF2, RUNTIME_UNKNOWN):  # a TF 1.x repository: no TF 2.x program
        return frozenset(found), tuple(messages)
    candidates = [node for node in nodes.values() if (listed(node.path, entries) if entries else node.main)]
    for node in sorted(candidates, key=lambda node: node.path):
        program = closure(node, nodes, runtime)
        if program.eager and (program.compat or program.tf1):
            eager = ", ".join(sorted(program.eager))
            messages.append((node.path, MIXED.format(eager=eager, compat=", ".join(sorted(program.compat)))
                             if program.compat else MIXED_TF1.format(eager=eager, tf1=", ".join(sorted(program.tf1)))))
            for path in program.reached:
                found |= {MIXED_FACT + path, f"{MIXED_ENTRY_FACT}{path}={node.path}"}
        elif program.eager or (entries and not program.compat):  # a listed compat program: NPU062
            found.add(ENTRY_FACT + node.path)
    if not any(fact.startswith(ENTRY_FACT) or fact.startswith(MIXED_FACT) for fact in found) \
            and any(node.eager(runtime) for node in nodes.values()):
        messages.append(("", NO_ENTRY))
    if runtime == RUNTIME_UNKNOWN:
        found |= {NEUTRAL_TF1_FACT + path for path in tf1_neutral_files(nodes)}
    return frozenset(found), tuple(messages)


def tf1_neutral_files(nodes: Mapping[str, Node]) -> list[str]:
    """The ``tf-neutral`` files (TensorFlow, no version's sign) of a repository whose version is
    undetermined that belong to its TF 1.x code: a neutral file next to (importing, or imported
    by) TF 1.x or compat files, directly or through other such neutral files, and next to no
    TF 2.x file. The other neutral files get the TF 2.x treatment: a TF 1.x rule's ``npu_bridge``
    in a TF 2.x program breaks it, a TF 2.x rule in TF 1.x code only migrates less."""
    known = set(nodes)
    packages = {".".join(name.split(".")[:end]) for name in known for end in range(1, name.count(".") + 1)}
    neighbours: dict[str, set[str]] = {name: set() for name in nodes}
    for name, node in nodes.items():
        for target in node.imports:
            for found in _resolved(target, module_parts(node.path)[:-1], known, packages):
                if found in nodes and found != name:
                    neighbours[name].add(found)
                    neighbours[found].add(name)
    neutral = {name for name, node in nodes.items() if node.tf and not (node.tf1 or node.tf2 or node.compat)}
    tf1_side = {name for name, node in nodes.items() if node.tf and (node.tf1 or node.compat)}
    tf2_side = {name for name, node in nodes.items() if node.tf and node.tf2 and not (node.tf1 or node.compat)}
    grown = True
    while grown:
        joining = {name for name in neutral - tf1_side
                   if neighbours[name] & tf1_side and not neighbours[name] & tf2_side}
        tf1_side |= joining
        grown = bool(joining)
    return sorted(nodes[name].path for name in neutral & tf1_side)


def with_programs(facts: frozenset[str], programs: frozenset[str]) -> frozenset[str]:
    """The facts the rules get: the graph's (read by :func:`program_facts` only) replaced by
    what it decided, so that an edit of one file's imports leaves the other files' facts (and
    their cached results) as they were."""
    return frozenset(fact for fact in facts if not fact.startswith(GRAPH_FACT)) | programs


def mixed_entry(facts: frozenset[str], path: str) -> Optional[str]:
    """The entry of the mixed program ``path`` is part of, or None (a set lookup first: the
    engine asks it of every file)."""
    if MIXED_FACT + path not in facts:
        return None
    prefix = f"{MIXED_ENTRY_FACT}{path}="
    return next((fact[len(prefix):] for fact in facts if fact.startswith(prefix)), path)
