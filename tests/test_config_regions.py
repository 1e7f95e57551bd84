"""Where NPU007 looks for the settings of a config name: the function, and the module when the
function does not bind the name itself (scopes.bound_names decides)."""

from __future__ import annotations

import pytest
from fissix import pygram, pytree
from fissix.pgen2 import driver
from fissix.pygram import python_symbols as syms

from npu_codemod.plugins.rules.sess_run._session_config import ConfigTarget


def regions(body: str) -> list[int]:
    source = f"config = make()\ndef train():\n{body}    sess = Session(config=config)\n"
    parser = driver.Driver(pygram.python_grammar_no_print_and_exec_statement, convert=pytree.convert)
    tree = parser.parse_string(source)
    function = next(node for node in tree.pre_order() if node.type == syms.funcdef)
    anchor = function.children[-1].children[-2]
    return [root.type for root, _ in ConfigTarget.at("config", anchor, 4, 4).regions]


@pytest.mark.parametrize("body", ["", "    global config\n"])
def test_a_function_that_does_not_bind_the_name_reads_the_module(body):
    assert regions(body) == [syms.funcdef, syms.file_input]


@pytest.mark.parametrize("body", ["    config = make()\n", "    import config\n",
                                  "    config, other = make()\n"])
def test_a_function_that_binds_the_name_has_its_own(body):
    assert regions(body) == [syms.funcdef]
