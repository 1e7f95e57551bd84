"""One reading of ``if __name__ == "__main__":`` (issue 30): the fissix tree's
:func:`main_block` and the selective parse's ``ast`` test agree, and NPU010 finds a one-line
block too (its own reading used to miss it, and took ``"__name__" == "__main__"`` for one)."""

from __future__ import annotations

import ast

import pytest

from npu_codemod.codemods.nodes import block_statements, compound_body, is_ast_main_block, main_block

from support.rules import assert_unchanged
from support.trees import parse

MAIN_TESTS = [
    ('__name__ == "__main__"', True),
    ("'__main__' == __name__", True),
    ('__name__ == """__main__"""', True),
    ("__name__ == u'__main__'", True),
    ('"__name__" == "__main__"', False),  # two strings: never true
    ("__main__ == __name__", False),  # two names
    ('__name__ != "__main__"', False),
    ('__name__ == b"__main__"', False),  # bytes are not the module's name
    ('__name__ == f"__main__"', False),
    ('__name__ == "__main__" == x', False),
]


@pytest.mark.parametrize("test,expected", MAIN_TESTS)
def test_both_trees_read_the_main_test_alike(test: str, expected: bool) -> None:
    source = f"import sys\n\nif {test}:\n    sys.exit(main())\n"
    assert (main_block(parse(source)) is not None) is expected
    assert is_ast_main_block(ast.parse(source).body[1]) is expected


def test_a_one_line_body_is_the_block_and_its_only_statement() -> None:
    tree = parse("def main():\n    pass\nif __name__ == '__main__': main(); print('done')\n")
    main = main_block(tree)
    assert main is not None
    assert [str(statement).strip() for statement in block_statements(compound_body(main))] == \
        ["main(); print('done')"]


def test_the_bodies_of_each_clause() -> None:
    tree = parse("if a:\n    x = 1\n    y = 2\nelif b: z = 3\nelse:\n    w = 4\n")
    statement = tree.children[0]
    assert [[str(s).strip() for s in block_statements(compound_body(statement, clause))]
            for clause in range(3)] == [["x = 1", "y = 2"], ["z = 3"], ["w = 4"]]


ONE_LINE_MAIN = '''"""Workers share one session."""
import threading

import tensorflow as tf

SESS = tf.Session()


def work(op):
    return SESS.run(op)


if __name__ == "__main__": threading.Thread(target=work, args=(tf.no_op(),)).start()
'''


def test_npu010_names_a_one_line_main_block_as_where_the_close_belongs() -> None:
    findings = assert_unchanged(ONE_LINE_MAIN, {"NPU010"})
    assert [(f.line, f.status) for f in findings] == [(6, "unmigrated")]
    assert "close it at the end of the 'if __name__ == \"__main__\":' block (line 13)" in findings[0].message
