"""find_import: module-level imports count wherever a block puts them; function ones do not."""

from __future__ import annotations

import pytest
from fissix import pygram, pytree
from fissix.pgen2 import driver

from npu_codemod.codemods.imports import find_import

IMPORT = "from npu_bridge.npu_init import *"
PARSER = driver.Driver(pygram.python_grammar_no_print_and_exec_statement, convert=pytree.convert)


@pytest.mark.parametrize("source", [
    f"{IMPORT}\n",
    f"import os; {IMPORT}  # comment\n",
    f"if x:\n    pass\nelif y:\n    {IMPORT}\n",
    f"if x: {IMPORT}\n",
    f"for i in y:\n    pass\nelse:\n    {IMPORT}\n",
    f"while x:\n    {IMPORT}\n",
    f"with x:\n    with y:\n        {IMPORT}\n",
    f"try:\n    pass\nexcept ImportError:\n    {IMPORT}\nfinally:\n    pass\n",
    "from  npu_bridge.npu_init  import  *\n",
])
def test_a_module_level_import_is_found(source: str) -> None:
    tree = PARSER.parse_string(source)
    assert find_import(tree, IMPORT) is not None


@pytest.mark.parametrize("source", [
    f"def f():\n    {IMPORT}\n",
    f"async def f():\n    {IMPORT}\n",
    f"@decorator\ndef f():\n    {IMPORT}\n",
    f"class C:\n    {IMPORT}\n",
    f"if x:\n    def f(): {IMPORT}\n",
    "x = lambda: __import__('npu_bridge.npu_init')\n",
])
def test_an_import_in_a_function_or_class_is_not(source: str) -> None:
    tree = PARSER.parse_string(source)
    assert find_import(tree, IMPORT) is None
