"""NPU001 npu-init-import: placement, exactly once, only in files another rule rewrote.

NPU004 (``tf.nn.dropout``) is the rule that makes a file "rewritten" in these cases.
"""

from __future__ import annotations

import pytest

from support.rules import assert_migrates, assert_unchanged, run_rules, sites

RULES = {"NPU001", "NPU004"}
IMPORT = "from npu_bridge.npu_init import *\n"
USE = "y = tf.nn.dropout(x, 0.5)\n"
USED = "y = npu_ops.dropout(x, 0.5)\n"


def migrate(before: str, after: str) -> list[tuple[str, int, int, str]]:
    """Assert the golden rewrite; return the NPU001 sites."""
    return [site for site in sites(assert_migrates(before, after, RULES)) if site[0] == "NPU001"]


def test_plain_file_gets_it_first() -> None:
    assert migrate("import tensorflow as tf\n" + USE, IMPORT + "import tensorflow as tf\n" + USED) == [
        ("NPU001", 1, 0, "migrated")
    ]


def test_after_shebang_encoding_docstring_and_future_imports() -> None:
    before = ('#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n"""Train.\n\nMore.\n"""\n'
              "from __future__ import absolute_import\nfrom __future__ import print_function\n\n"
              "import os\nimport tensorflow as tf\n" + USE)
    after = ('#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n"""Train.\n\nMore.\n"""\n'
             "from __future__ import absolute_import\nfrom __future__ import print_function\n"
             + IMPORT + "\nimport os\nimport tensorflow as tf\n" + USED)
    assert migrate(before, after) == [("NPU001", 10, 0, "migrated")]


def test_after_shebang_and_coding_without_blank_line() -> None:
    before = "#!/usr/bin/env python\n# coding: utf-8\nimport tensorflow as tf\n" + USE
    after = "#!/usr/bin/env python\n# coding: utf-8\n" + IMPORT + "import tensorflow as tf\n" + USED
    assert migrate(before, after) == [("NPU001", 3, 0, "migrated")]


def test_licence_header_stays_on_top() -> None:
    licence = "# Copyright 2018 The Authors.\n#\n# Licensed under the Apache License.\n\n"
    before = licence + "import tensorflow as tf\n" + USE
    assert migrate(before, licence + IMPORT + "import tensorflow as tf\n" + USED) == [
        ("NPU001", 5, 0, "migrated")
    ]


def test_comment_attached_to_the_first_import_stays_with_it() -> None:
    before = "# Copyright 2018.\n\n# TF 1.x only\nimport tensorflow as tf\n" + USE
    after = "# Copyright 2018.\n\n" + IMPORT + "# TF 1.x only\nimport tensorflow as tf\n" + USED
    migrate(before, after)


def test_docstring_then_blank_line() -> None:
    before = '"""Doc."""\n\nimport tensorflow as tf\n' + USE
    after = '"""Doc."""\n' + IMPORT + "\nimport tensorflow as tf\n" + USED
    assert migrate(before, after) == [("NPU001", 3, 0, "migrated")]


def test_before_the_first_other_import_even_if_tf_is_not_first() -> None:
    before = "import sys\nsys.path.append('..')\nimport tensorflow.compat.v1 as tf\n" + USE
    after = IMPORT + "import sys\nsys.path.append('..')\nimport tensorflow.compat.v1 as tf\n" + USED
    migrate(before, after)


def test_code_before_the_first_import_goes_after_it() -> None:
    before = '"""Doc."""\n__author__ = "me"\nimport tensorflow as tf\n' + USE
    after = '"""Doc."""\n' + IMPORT + '__author__ = "me"\nimport tensorflow as tf\n' + USED
    assert migrate(before, after) == [("NPU001", 2, 0, "migrated")]


def test_tf_import_in_try_block() -> None:
    body = ("try:\n    import tensorflow.compat.v1 as tf\nexcept ImportError:\n"
            "    import tensorflow as tf\n")
    migrate(body + USE, IMPORT + body + USED)


def test_future_import_and_tf_import_on_one_line() -> None:
    before = "from __future__ import division; import tensorflow as tf\n" + USE
    after = ("from __future__ import division; from npu_bridge.npu_init import *; "
             "import tensorflow as tf\n" + USED)
    migrate(before, after)


def test_crlf_file_gets_a_crlf_import() -> None:
    before = '"""Doc."""\r\nimport tensorflow as tf\r\ny = tf.nn.dropout(x, 0.5)\r\n'
    after = ('"""Doc."""\r\nfrom npu_bridge.npu_init import *\r\nimport tensorflow as tf\r\n'
             "y = npu_ops.dropout(x, 0.5)\r\n")
    migrate(before, after)


@pytest.mark.parametrize("existing", [
    "from npu_bridge.npu_init import *\n",
    "from npu_bridge.npu_init import *  # noqa: F403\n",
    "from  npu_bridge.npu_init  import  *\n",
    "try:\n    from npu_bridge.npu_init import *\nexcept ImportError:\n    pass\n",
])
def test_existing_import_is_left_alone(existing: str) -> None:
    before = existing + "import tensorflow as tf\n" + USE
    findings = assert_migrates(before, existing + "import tensorflow as tf\n" + USED, RULES)
    assert ("NPU001", 1, 0, "migrated") in sites(findings)


def test_existing_import_after_tf_import_is_left_alone() -> None:
    before = "import tensorflow as tf\nfrom npu_bridge.npu_init import *\n" + USE
    findings = assert_migrates(before, before.replace(USE, USED), RULES)
    assert ("NPU001", 2, 0, "migrated") in sites(findings)


def test_import_inside_a_function_does_not_count() -> None:
    body = "def f():\n    from npu_bridge.npu_init import npu_ops\n"
    before = "import tensorflow as tf\n" + body + USE
    migrate(before, IMPORT + "import tensorflow as tf\n" + body + USED)


def test_exactly_once_with_several_rewrites() -> None:
    before = "import tensorflow as tf\n" + USE * 3
    new, _ = run_rules(before, {"NPU001", "NPU002", "NPU004"})
    assert new is not None and new.count("npu_bridge") == 1


@pytest.mark.parametrize("source", [
    "import tensorflow as tf\nx = tf.constant(1)\n",
    '"""Doc."""\nimport tensorflow as tf\nmemory.batch(32)\n',
    "import tensorflow as tf\ny = tf.nn.dropout(x, noise_shape=[1])\n",
])
def test_file_no_rule_rewrote_is_untouched(source: str) -> None:
    findings = assert_unchanged(source, {"NPU001", "NPU002", "NPU004"})
    assert not [f for f in findings if f.rule_id == "NPU001"]


def test_nothing_when_it_is_the_only_rule() -> None:
    assert assert_unchanged("import tensorflow as tf\n" + USE, {"NPU001"}) == []
