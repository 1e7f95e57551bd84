"""``ast_references`` (CPython's ``ast``) finds exactly the references ``references_under``
finds on the fissix tree: over every Python file of the corpora, sample projects and example
plugin, every golden case's source in the tests, and a list of tricky snippets. NPU100 reads
its uses from it, so the audit's findings do not depend on which parser answered."""

from __future__ import annotations

import re
import textwrap
from dataclasses import fields
from typing import Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.api import ImportNames, references_under
from npu_codemod.api._toolkit import ReferenceSite, ast_references, parse_module
from npu_codemod.codemods.ast_names import ast_import_names, names_read_alike
from npu_codemod.codemods.ast_references import (
    SourcePositions,
    parsed_references,
    parsed_site_values,
    spelled_at,
)
from npu_codemod.codemods.modules import ModuleIndex, module_ast
from npu_codemod.testing import assert_reports

from support.sources import python_sources

ROOTS = ("tensorflow", "horovod")
HEAD = "import tensorflow as tf\nimport horovod.tensorflow as hvd\nfrom tensorflow import Tensor\n"

Sites = list[ReferenceSite]


def both(text: str) -> Optional[tuple[Sites, Optional[Sites]]]:
    """(the fissix finder's sites, the ast finder's) for ``text``; None when fissix cannot
    parse it (the engine would not run a rule on it)."""
    body = text if text.endswith("\n") or not text else text + "\n"
    tree = parse_module(body)
    if tree is None:
        return None
    resolvers = [ImportNames(tree, root=root) for root in ROOTS]
    return [reference.site for reference in references_under(tree, resolvers)], \
        ast_references(body, resolvers)


def test_both_finders_agree_on_every_corpus_file_and_golden_case() -> None:
    compared, sites, python2, differ = 0, 0, [], []
    for where, text in python_sources().items():
        answers = both(text)
        if answers is None:
            continue
        on_tree, from_ast = answers
        if from_ast is None:
            python2.append(where)
            continue
        compared += 1
        sites += len(on_tree)
        if from_ast != on_tree:
            differ.append(where)
    assert differ == []
    assert compared > 450 and sites > 1500  # the collection found the cases it should
    assert python2  # Python 2 sources: the tree answers for them


TRICKY = [
    # tabs, CRLF, form feed, line continuations, non-ASCII text before a reference
    "x = tf.nn.relu(y)\t# a tab\nx =\ttf.nn.relu(y)\n",
    "if x:\n\ty = tf.layers.dense(x)\n\tz = Tensor\n",
    "if x:\r\n    y = tf.layers.dense(x)\r\n    z = hvd.rank()\r\n",
    "\x0cx = tf.a\n\x0c\ny = Tensor\n",
    "x = tf.nn.\\\n    relu(y)\nz = tf.nn \\\n    .relu(y)\n",
    "x = (tf.nn\n     .relu(y))\nx = foo(a,\n        tf.float32)\n",
    "s = '日本語'; x = tf.nn.relu(y); t = Tensor\n",
    "s = '''é\nü'''; x = tf.nn.relu(y)\n",
    "名前 = tf.constant(1); 値 = Tensor(名前)\n",
    "x = '中文字符串' if tf.a else '🎉'; y = tf.b  # 注释 tf.c\n",
    # f-strings: their names are not references
    "x = f'{tf.nn.relu}' + f\"{f'{tf.x}'}\" + tf.y\n",
    "x = f'{x!r:{tf.w}}' + rf'{Tensor}' + F'{hvd.rank()=}'\n",
    # decorators
    "@tf.function\ndef f(): pass\n",
    "@tf.custom_gradient\n@other\ndef f(x): pass\n",
    "@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])\ndef f(x): pass\n",
    "@Tensor\nclass A: pass\n@ tf . function\ndef f(): pass\n",
    "class A:\n    @tf.function\n    async def f(self): pass\n",
    # lambdas and comprehensions
    "g = lambda tf: tf.x\ng = lambda x, tf: tf\ng = lambda *tf: 0\ng = lambda **tf: 0\n",
    "g = lambda tf=1: 0\ng = lambda x=tf.float32: x\ng = lambda: tf.constant(1)\n",
    "xs = [tf.constant(i) for i in range(3)]\nxs = [i for tf in range(3)]\n",
    "xs = {tf: Tensor for Tensor in y}\nxs = (tf.a for x in tf.b if tf.c)\n",
    # class bases, keywords, metaclass
    "class A(tf.keras.Model, metaclass=tf.M): pass\nclass B(metaclass=Tensor): pass\n",
    "class A(Tensor, metaclass=M): pass\nclass B(C, Tensor): pass\nclass D(Tensor): pass\n",
    "class A(Tensor,): pass\nclass B((Tensor)): pass\nclass C((tf.Model), tf.Layer): pass\n",
    "class A(*tf.bases): pass\nclass B(**tf.kw): pass\nclass C(tf.make()): pass\n",
    "class A(\n    Tensor\n): pass\nclass B(Tensor  # why\n        ): pass\n",
    "class A(tf.keras.layers.Layer):\n    def call(self, x: tf.Tensor) -> tf.Tensor:\n"
    "        return tf.nn.relu(x)\n",
    # star-args, walrus
    "f(*tf.args, **tf.kwargs)\nf(*Tensor, **Tensor)\nf(x, *tf, y=Tensor, **tf)\n",
    "if (tf := 1): pass\nf(x, tf := 1)\nf(x, (tf := 1))\nf((tf := 1))\nf(Tensor := 1)\n",
    "while (Tensor := g()): pass\nf(a)(tf := 2)\n(f)(b, (Tensor := 3))\n",
    # async
    "async def f():\n    async with tf.x() as tf:\n        pass\n    async for tf in tf.y():\n"
    "        pass\n    return await tf.z(await Tensor)\n",
    "async def f():\n    x = [await tf.a() for _ in y]\n    y = await (tf.b())\n",
    # global, nonlocal
    "global tf\ndef f():\n    global tf, Tensor\n    tf = 1\n",
    "def f():\n    x = 1\n    def g():\n        nonlocal x\n        x = tf\n",
    # assignment targets
    "a, tf_x = tf.a, tf.b\na, tf = 1, 2\ntf, = x\n[tf, Tensor] = x\n*tf, a = x\n",
    "a = b = tf = 1\ntf = tf.x\ntf.x = tf.y\ntf[0] = tf[1]\n(tf) = 1\n",
    "tf.a[0].b(1).c = 1\nx = tf.a[0].b(1).c\n",
    "tf += 1\ntf.x += 1\nTensor[0] += 1\n(tf) -= 1\n",
    # subscripts, del
    "x = tf[0:tf.n, ...]\nx = y[tf]\nx = tf[0]()\nx = tf()()\nx = tf().a\n",
    "del tf\ndel tf.x, Tensor\ndel (tf)\n",
    # annotations
    "x: tf.Tensor = tf.zeros([1])\nx: Tensor = Tensor()\nx: Tensor\ntf: int = 1\n(tf): int = 1\n",
    "def f(x: Tensor, *args: Tensor, y: tf.Tensor = tf.zeros(1), **kw: Tensor) -> Tensor: pass\n",
    "def f(x: Tensor = Tensor) -> tf.Tensor: pass\ndef g(x: 'tf.Tensor') -> 'Tensor': pass\n",
    "def f(x=tf.float32, *, y=Tensor, z=tf): pass\ndef g(tf, Tensor=Tensor): pass\n",
    # operators
    "x = -tf + ~Tensor\nx = not tf\nx = tf ** 2\nx = 2 ** tf ** 3\nx = 2 ** -tf\n",
    "x = Tensor ** Tensor\nx = tf.a ** 2\nx = (tf.a) ** tf.b\nx = 2 ** (tf)\n",
    "x = tf if tf else Tensor\nx = {**tf}\nx = [*tf]\nx = tf.a @ tf.b < Tensor\n",
    # other statements
    "print(tf, file=tf.x)\nassert tf, Tensor\nraise tf.errors.OpError from Tensor\n",
    "try:\n    pass\nexcept tf.errors.OpError as tf:\n    pass\n",
    "try:\n    pass\nexcept (tf.errors.A, Tensor) as Tensor:\n    pass\n"
    "except (E) as tf:\n    pass\nexcept E as \\\n  hvd:\n    pass\nexcept E:\n    pass\n",
    "with tf.Session() as sess, tf.device('/cpu:0'):\n    sess.run(tf.x)\n",
    "for tf.x in y: pass\nfor i, tf in enumerate(x): pass\n",
    "def f():\n    yield tf\n    yield from Tensor\n    return tf\n",
    # parentheses and chains
    "x = tf.a(tf.b(tf.c(1)))(2)\nx = (tf.a)(1)\nx = (tf)(1)\nx = (tf.a).b(1)\nx = (tf).a\n",
    "x = tf.a.b.c.d.e\nx = tf . a . b\nx = y.tf.z\nx = [\n    tf.a,\n    Tensor,\n]\n",
    "x = tf.compat.v1.nn.relu(y)\nx = tf.compat.v1\nx = tf.compat.v2.nn.dropout(y)\n",
    "x = '''tf.x''' + tf.y\nx = tf.a; y = Tensor; z = tf\nx = tf.a(x)[0].b ** 2\n",
    "class A:\n    tf = 1\n    Tensor: int = 2\n    def m(self):\n        return self.tf\n",
    "x = tf.a(name=tf.b, tf=1)\ndict(tf=1, Tensor=Tensor)\nhvd.init(); hvd.rank()\n",
    # internal modules and aliases
    "from tensorflow.python.ops import nn_ops as nn\nv1 = tf.compat.v1\n"
    "x = nn.dropout(y)\nz = v1.Session()\n",
]


@pytest.mark.parametrize("snippet", TRICKY)
def test_both_finders_agree_on_a_tricky_snippet(snippet: str) -> None:
    answers = both(HEAD + snippet)
    assert answers is not None
    on_tree, from_ast = answers
    assert from_ast is not None
    assert from_ast == on_tree


def sites_with_and_without_index(text: str) -> tuple[Sites, Sites]:
    """``parsed_references`` of ``text`` without its module's index and with it."""
    module = module_ast(text)
    assert module is not None and names_read_alike(text)
    resolvers = [names for names in (ast_import_names(text, root) for root in ROOTS) if names is not None]
    return parsed_references(text, module, resolvers), parsed_references(text, module, resolvers,
                                                                         index=ModuleIndex(module))


def test_with_the_index_the_walk_finds_the_same_sites_on_every_source() -> None:
    """The hand-over's record reads the uses with the module's index: the walk skips the
    statements that hold no bound name, not those whose lines spell none."""
    compared, sites, differ = 0, 0, []
    for where, text in [*python_sources().items(), *enumerate(HEAD + snippet for snippet in TRICKY)]:
        text = text if text.endswith("\n") else text + "\n"
        if module_ast(text) is None or "\r" in text or not names_read_alike(text):
            continue
        without, with_index = sites_with_and_without_index(text)
        compared += 1
        sites += len(without)
        if with_index != without:
            differ.append(where)
    assert differ == []
    assert compared > 450 and sites > 1500


def test_with_the_index_a_statement_is_walked_where_a_line_of_it_holds_a_name() -> None:
    source = HEAD + textwrap.dedent('''\
        @tf.function
        @other(
            Tensor)
        def f(x):
            "tf.x and Tensor, in a string: no use"
            y = (x +  # tf.y in a comment
                 hvd.rank())
            return [x for x in range(3)]


        class A(
                tf.Module):
            z = 1


        w = """tf.w""" if x else tf.v
    ''')
    without, with_index = sites_with_and_without_index(source)
    assert [site.spelled for site in with_index] == ["tf.function", "Tensor", "hvd.rank", "tf.Module", "tf.v"]
    assert with_index == without


def test_the_values_of_each_site_are_its_fields_in_order() -> None:
    """What the hand-over's record keeps of each site (``parsed_site_values``, no site made)."""
    source = HEAD + "@tf.function\ndef f(x: Tensor):\n    return hvd.rank()\n\nclass A(tf.Module): pass\n"
    module = module_ast(source)
    assert module is not None
    resolvers = [names for names in (ast_import_names(source, root) for root in ROOTS) if names is not None]
    assert parsed_site_values(source, module, resolvers, index=ModuleIndex(module)) == [
        (4, 1, 12, "tensorflow.function", "tf.function", False, False, False),
        (5, 9, 15, "tensorflow.Tensor", "Tensor", False, False, True),
        (6, 11, 19, "horovod.tensorflow.rank", "hvd.rank", True, False, False),
        (8, 8, 17, "tensorflow.Module", "tf.Module", False, True, True),
    ]
    assert parsed_site_values(source, module, resolvers) == [
        tuple(getattr(site, field.name) for field in fields(ReferenceSite))
        for site in parsed_references(source, module, resolvers)]


def test_the_sites_where_fissix_reads_names_its_own_way() -> None:
    """What both finders answer where fissix's tree is not ``ast``'s: a lone bare base and a
    bare annotation (a parameter's, a return's) are references, like any other; the bare name
    after ``**`` or ``await`` is not."""
    source = HEAD + textwrap.dedent('''\
        class A(Tensor): pass
        class B(Tensor, metaclass=M): pass
        def f(x: Tensor, *a: Tensor) -> Tensor: return 2 ** tf
        async def g(): await tf.a()
        ''')
    answers = both(source)
    assert answers is not None and answers[0] == answers[1]
    assert [(s.line, s.column, s.end_column, s.spelled, s.called, s.base_class)
            for s in answers[1] or ()] == [
        (4, 8, 14, "Tensor", False, True),
        (5, 8, 14, "Tensor", False, True),
        (6, 9, 15, "Tensor", False, False),
        (6, 21, 27, "Tensor", False, False),
        (6, 32, 38, "Tensor", False, False)]


def test_a_name_a_statement_binds_is_no_use_of_what_it_was_bound_to() -> None:
    """Every kind of binding target: the name is rebound (or deleted), not used; a name read
    in the same statement is a use."""
    source = HEAD + textwrap.dedent('''\
        for tf in batches: pass
        with open(path) as tf, lock as (a, Tensor): pass
        xs = [Tensor(i) for Tensor in range(3)]
        a, tf = tf.a, 2
        [tf, *Tensor] = x
        a = b = tf = Tensor
        tf += 1
        tf: int = 1
        del tf, (Tensor)
        h = lambda tf: tf
        if (tf := f(x)): print(tf)
        try: pass
        except E as tf: pass
        ''')
    answers = both(source)
    assert answers is not None and answers[0] == answers[1]
    assert [(s.line, s.column, s.spelled) for s in answers[1] or ()] == [
        (6, 6, "Tensor"), (7, 8, "tf.a"), (9, 13, "Tensor"), (13, 15, "tf"), (14, 23, "tf")]


def test_a_site_has_the_qualified_name_the_spelling_and_the_columns_in_characters() -> None:
    source = HEAD + "s = 'é€'; x = tf.compat.v1.nn.relu(y, name='ü'); z = Tensor\n"
    assert ast_references(source, [ImportNames(parse_module(source), root="tensorflow")]) == [
        ReferenceSite(4, 14, 34, "tensorflow.nn.relu", "tf.compat.v1.nn.relu", True, False, False),
        ReferenceSite(4, 53, 59, "tensorflow.Tensor", "Tensor", False, False, False)]


def test_it_leaves_python_2_lone_carriage_returns_and_deep_nesting_to_the_tree() -> None:
    names = [ImportNames(parse_module(HEAD), root="tensorflow")]
    assert ast_references(HEAD + "print tf.a\n", names) is None
    assert ast_references(HEAD + "x = tf.a\ry = tf.b\n", names) is None
    assert ast_references(HEAD + "x = " + " + ".join(["tf.a"] * 3000) + "\n", names) is None
    assert ast_references("x = 1\n", []) == []


def test_the_audit_reports_a_file_too_deep_for_ast_from_the_tree() -> None:
    source = "import tensorflow as tf\n\nx = " + " + ".join(["tf.is_nan(y)"] * 3000) + "\n"
    assert_reports({"NPU100"}, source, findings=[
        ("NPU100", 3, 4 + 15 * index, "unmigrated") for index in range(3000)])


def test_the_audit_reports_python_2_code_from_the_tree() -> None:
    source = '''import tensorflow as tf


def report(loss):
    print "loss", tf.is_nan(loss)
'''
    assert_reports({"NPU100"}, source, findings=[("NPU100", 5, 18, "unmigrated")])


_TEXT_PIECES = st.sampled_from(["tf", "hvd", "tf_x", "tf.", ".tf", "x", "_", "é", "2", " ", "\n",
                                "(", "#", "'", "\\", "ｔｆ", "tf_estimator", "=", ","])


@settings(max_examples=500, deadline=None)
@given(st.lists(_TEXT_PIECES, max_size=16).map("".join),
       st.sampled_from([("tf",), ("tf", "hvd"), ("tf", "tf_estimator"), ("x", "tf_x")]))
def test_the_names_are_found_where_the_look_behind_pattern_finds_them(text: str,
                                                                      heads: tuple[str, ...]) -> None:
    """The statements the walk enters are those whose lines spell a bound name: the fast search
    (the literal first, the look-behind tested after) finds what the one pattern found."""
    pattern = re.compile(r"(?<![\w.])(?:%s)\b" % "|".join(
        re.escape(name) for name in sorted(heads, key=len, reverse=True)))
    by_head = {name: ImportNames(parse_module(""), root="tensorflow") for name in heads}
    assert spelled_at(text, by_head) == [match.start() for match in pattern.finditer(text)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["a", "\n", "\r\n", "é", "\t", "\x0c"]), max_size=20).map("".join))
def test_line_starts_are_where_each_line_of_the_text_starts(text: str) -> None:
    starts = SourcePositions(text).starts
    lines = text.split("\n")
    assert starts[:-1] == [sum(len(line) + 1 for line in lines[:number]) for number in range(len(lines))]
    assert starts[-1] == len(text) + 1


def test_both_finders_mark_the_names_used_only_as_types() -> None:
    """A base class, the class argument of ``isinstance``/``issubclass`` (alone, in a tuple,
    in parentheses) and a name anywhere in an annotation are type uses (NPU071 counts them,
    reports none); a call is a call wherever it is, and a default value, the checked value, a
    starred tuple, a list or a metaclass are no type uses."""
    source = HEAD + textwrap.dedent('''\
        def f(x: tf.Tensor, *a: Tensor, y: Optional[tf.Variable] = tf.zeros) -> Dict[str, tf.Tensor]:
            if isinstance(x, tf.Tensor) or issubclass(type(x), (Tensor, (tf.Variable,), *tf.X)):
                v: tf.Variable = tf.Variable(1)
            return isinstance(tf.constant(1), (tf.Tensor)) and isinstance(x, [tf.Tensor][0])
        class A(tf.keras.Model, metaclass=tf.M): pass
        z: T(a=tf.C, b=[tf.D for _ in tf.E]) = lambda q=tf.F: tf.G
        isinstance(x, y, tf.H) or isinstance(x, tf.a(1)) or check(x, tf.I)
        ''')
    answers = both(source)
    assert answers is not None and answers[0] == answers[1]
    assert [(s.line, s.spelled) for s in answers[1] or () if s.type_use] == [
        (4, "tf.Tensor"), (4, "Tensor"), (4, "tf.Variable"), (4, "tf.Tensor"),
        (5, "tf.Tensor"), (5, "Tensor"), (5, "tf.Variable"), (6, "tf.Variable"),
        (7, "tf.Tensor"), (8, "tf.keras.Model"), (9, "tf.C"), (9, "tf.D"), (9, "tf.E")]
    assert [(s.line, s.spelled) for s in answers[1] or () if not s.type_use] == [
        (4, "tf.zeros"), (5, "tf.X"), (6, "tf.Variable"), (7, "tf.constant"), (7, "tf.Tensor"),
        (8, "tf.M"), (9, "tf.F"), (9, "tf.G"), (10, "tf.H"), (10, "tf.a"), (10, "tf.I")]


def test_both_finders_mark_the_names_only_looked_at() -> None:
    """A name followed by an introspection attribute (``Layer.__dict__.items()``, ``X.__name__``:
    the name stops before it) and the first argument of ``dir``/``vars``/``help``/``inspect.*``
    are only looked at: type uses (tensorflow/similarity's ``gen_api_doc.py``). A call, another
    dunder (``__init__``), a later argument and a parenthesised one are no such use."""
    source = HEAD + textwrap.dedent('''\
        import inspect
        names = list(tf.keras.layers.Layer.__dict__.items()) + [tf.compat.v1.train.Optimizer.__name__]
        members = dir(tf.keras.Model) + inspect.getmembers(tf.Module, callable) + vars(Tensor)
        doc = tf.a().__doc__ + tf.b.__init__(x) + dir(tf.c(1)) + inspect.getmembers(x, tf.d) + vars((tf.e))
        ''')
    answers = both(source)
    assert answers is not None and answers[0] == answers[1]
    assert [(s.line, s.spelled, s.name) for s in answers[1] or () if s.type_use] == [
        (5, "tf.keras.layers.Layer", "tensorflow.keras.layers.Layer"),
        (5, "tf.compat.v1.train.Optimizer", "tensorflow.train.Optimizer"),
        (6, "tf.keras.Model", "tensorflow.keras.Model"), (6, "tf.Module", "tensorflow.Module"),
        (6, "Tensor", "tensorflow.Tensor")]
    assert [(s.line, s.spelled) for s in answers[1] or () if not s.type_use] == [
        (7, "tf.a"), (7, "tf.b.__init__"), (7, "tf.c"), (7, "tf.d"), (7, "tf.e")]


def test_both_finders_mark_the_types_typing_reads() -> None:
    """A name in the subscript of a generic type of ``typing`` (a type alias: ``Union[...]``,
    ``Mapping[str, ...]``, ``Callable[[...], ...]``, ``typing.Optional``, ``list[...]``) and a
    type argument of ``cast``/``TypeVar``/``NewType`` are type uses (tensorflow/gnn's
    ``FieldSpec = Union[tf.TensorSpec, tf.RaggedTensorSpec]``); a subscript of anything else,
    ``tf.cast``'s arguments, ``cast``'s value and ``TypeVar``'s name are not."""
    source = HEAD + textwrap.dedent('''\
        import typing
        from typing import Callable, Mapping, TypeVar, Union, cast
        FieldSpec = Union[tf.TensorSpec, (tf.RaggedTensorSpec)]
        Features = Mapping[str, tf.RaggedTensor] or typing.Optional[Tensor] or list[tf.A]
        Fn = Callable[[tf.B, Tensor], Union[tf.C, typing.Tuple[tf.D, ...]]]
        y = cast(tf.E, tf.x) or typing.cast((tf.F), x) or tf.cast(tf.y, tf.float32)
        T = TypeVar("T", tf.G, tf.H, bound=tf.I) or typing.NewType("N", tf.J) or TypeVar(tf.n)
        z = x[tf.newaxis, tf.k] or Union[tf.m(1)] or Mapping[[tf.p for _ in y]] or cast(*tf.q)
        ''')
    answers = both(source)
    assert answers is not None and answers[0] == answers[1]
    assert [(s.line, s.spelled) for s in answers[1] or () if s.type_use] == [
        (6, "tf.TensorSpec"), (6, "tf.RaggedTensorSpec"), (7, "tf.RaggedTensor"), (7, "Tensor"),
        (7, "tf.A"), (8, "tf.B"), (8, "Tensor"), (8, "tf.C"), (8, "tf.D"), (9, "tf.E"),
        (9, "tf.F"), (10, "tf.G"), (10, "tf.H"), (10, "tf.I"), (10, "tf.J")]
    assert [(s.line, s.spelled) for s in answers[1] or () if not s.type_use] == [
        (9, "tf.x"), (9, "tf.cast"), (9, "tf.y"), (9, "tf.float32"), (10, "tf.n"),
        (11, "tf.newaxis"), (11, "tf.k"), (11, "tf.m"), (11, "tf.p"), (11, "tf.q")]
