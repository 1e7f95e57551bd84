"""The ``ast`` form of sites that are attributes of a module: ``tf.nn.dropout``, ``layers.Dropout``.

A rule that acts on ``x.dropout`` only when the file's bindings resolve the dotted name
(``ctx.tf.qualify``) acts on none where ``x`` is a parameter or a variable (``hparams.dropout``,
``self.dropout``): a dotted name resolves only through its first name, which an import or an
alias assignment binds. The unit layout gives the mark's word (``@dropout``) only to the units
holding such an attribute of a name the file binds (see ``Rule._ast_sites``), so a unit that
spells ``dropout`` only as a hyperparameter, a keyword or a parameter is not parsed for it.
A name the file binds to the API itself (``from tensorflow.nn import dropout as d``) is a site
name of the file through the word's attribute name (``units.spelled_names``).
"""

from __future__ import annotations

import ast
from functools import lru_cache, partial
from typing import Union

from npu_codemod.api._toolkit import ast_dotted_name


@lru_cache(maxsize=None)
def bound_attribute_marks(
    attributes: tuple[str, ...], unbound: frozenset[str] = frozenset()
) -> tuple[tuple[type, str, partial[Union[bool, str]]], ...]:
    """One ``_ast_sites`` mark per name of ``attributes``: the word ``@<name>`` for each
    ``x.<name>`` of a dotted name (``a.b.<name>``: what ``prefix_name`` spells) whose first name
    the file binds, and for those of ``unbound`` (dotted names the rule acts on however the
    file binds them: ``npu_ops.dropout``, its own output). Rules that ask for the same marks
    get the same ones (NPU007's and NPU008's ``@train``): the layout tests each mark once (the
    engine's marks are distinct), not once per rule on every attribute of every file."""
    return tuple((ast.Attribute, "@" + name, partial(bound_attribute, name, unbound))
                 for name in attributes)


def bound_attribute(name: str, unbound: frozenset[str], node: ast.Attribute) -> Union[bool, str]:
    """For a mark of ``x.<name>``: True for a dotted name of ``unbound``, the first name of
    another dotted name (the layout checks that the file binds it), False for anything else
    (another attribute, or one of a call or subscript: ``f().dropout``)."""
    if node.attr != name:
        return False
    dotted = ast_dotted_name(node)
    if dotted is None:
        return False
    return True if dotted in unbound else dotted.partition(".")[0]
