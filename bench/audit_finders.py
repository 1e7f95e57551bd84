"""What NPU100 (the API audit) costs per file, finding its uses with ``ast`` or the fissix tree.

    python bench/audit_finders.py [FOLDER...]     # default: tests/corpus

For each Python file that fissix parses: ``api_uses`` as it was (``references_under`` on the
tree, the tree already parsed by the engine), as it is (``ast_references``: ``ast.parse`` of the
text plus one walk), and the same without the parse (when another analysis of the file parsed
it first: ``module_ast`` keeps it), next to the fissix parse that selective parsing can skip.
Best of 5 runs, milliseconds per file (CPU time); the totals are over all files.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Callable

from npu_codemod.codemods.ast_references import ast_references
from npu_codemod.codemods.engine import parse_module
from npu_codemod.codemods.modules import module_ast
from npu_codemod.codemods.names import ImportNames
from npu_codemod.codemods.qualified import ReferenceSite, references_under
from npu_codemod.codemods.source import decode_source
from npu_codemod.codemods.support_list import list_name, support_list

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = 5


def best(run: Callable[[], object]) -> float:
    """The smallest CPU time of ``ROUNDS`` runs, in milliseconds."""
    times = []
    for _ in range(ROUNDS):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return min(times) * 1000


def judged(sites: list[ReferenceSite]) -> int:
    """What ``api_uses`` does with the sites: each listed name looked up."""
    listed = support_list()
    return sum(1 for site in sites if (api := list_name(site.name)) and listed.lookup(api))


def measure(text: str) -> tuple[float, float, float, float]:
    """(fissix parse, tree finder, ast finder with its parse, ast finder on a parsed ast)."""
    tree = parse_module(text)
    assert tree is not None
    resolvers = [ImportNames(tree, root=root) for root in ("tensorflow", "horovod")]

    def on_tree() -> int:
        return judged([reference.site for reference in references_under(tree, resolvers)])

    def with_parse() -> int:
        module_ast.cache_clear()
        return judged(ast_references(text, resolvers) or [])

    def parsed() -> int:
        return judged(ast_references(text, resolvers) or [])

    return best(lambda: parse_module(text)), best(on_tree), best(with_parse), best(parsed)


def main(folders: list[str]) -> None:
    files = sorted(path for folder in folders for path in (ROOT / folder).rglob("*.py")
                   if "expected" not in path.parts)  # a corpus's rewritten files
    rows: list[tuple[Path, int, float, float, float, float]] = []
    for path in files:
        text = decode_source(path.read_bytes()).text
        text = text if text.endswith("\n") or not text else text + "\n"
        if parse_module(text) is None or module_ast(text) is None:
            continue  # not Python 3 for ast: the audit still uses the tree
        rows.append((path.relative_to(ROOT), text.count("\n"), *measure(text)))
    print(f"{'file':48} {'lines':>5} {'fissix':>7} {'tree':>6} {'ast':>6} {'ast*':>6}")
    for name, lines, *times in rows:
        print(f"{str(name)[-48:]:48} {lines:5} " + " ".join(f"{t:6.2f}" for t in times))
    totals = [sum(column) for column in zip(*(row[2:] for row in rows))]
    print(f"{'total (' + str(len(rows)) + ' files, ms)':48} {'':5} "
          + " ".join(f"{t:6.1f}" for t in totals))
    print("fissix: the parse; tree: api_uses on the parsed tree (before); ast: api_uses from "
          "the text (after); ast*: the same, the ast already parsed")


if __name__ == "__main__":
    main(sys.argv[1:] or ["tests/corpus"])
