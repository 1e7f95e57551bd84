"""find_import: module-level imports count wherever a block puts them; function ones do not."""

from __future__ import annotations

import pytest
from fissix import pygram, pytree
from fissix.pgen2 import driver

from npu_codemod.codemods.imports import find_import

IMPORT = "from npu_bridge.npu_init import *"
PARSER = driver.Driver(pygram.python_grammar_no_print_and_exec_statement, convert=pytree.convert)
MODULE_LEVEL = [
    f"{IMPORT}\n",
    f"import os; {IMPORT}  # comment\n",
    f"if x:\n    pass\nelif y:\n    {IMPORT}\n",
    f"if x: {IMPORT}\n",
    f"for i in y:\n    pass\nelse:\n    {IMPORT}\n",
    f"while x:\n    {IMPORT}\n",
    f"with x:\n    with y:\n        {IMPORT}\n",
    f"try:\n    pass\nexcept ImportError:\n    {IMPORT}\nfinally:\n    pass\n",
    "from  npu_bridge.npu_init  import  *\n",
]
NOT_MODULE_LEVEL = [
    f"def f():\n    {IMPORT}\n",
    f"async def f():\n    {IMPORT}\n",
    f"@decorator\ndef f():\n    {IMPORT}\n",
    f"class C:\n    {IMPORT}\n",
    f"if x:\n    def f(): {IMPORT}\n",
    "x = lambda: __import__('npu_bridge.npu_init')\n",
    "from npu_bridge.npu_init import npu_ops\n",
]


@pytest.mark.parametrize("source, found", [(source, True) for source in MODULE_LEVEL]
                         + [(source, False) for source in NOT_MODULE_LEVEL])
def test_only_a_module_level_import_is_found(source: str, found: bool) -> None:
    assert (find_import(PARSER.parse_string(source), IMPORT) is not None) == found
