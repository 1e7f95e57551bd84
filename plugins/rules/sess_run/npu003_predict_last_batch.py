"""NPU003 predict-last-batch: asserts that every example got a prediction fail on the NPU.

Training drops the last partial batch (NPU002); at inference the last batch must instead be
padded to ``batch_size`` with dummy examples whose outputs are dropped, or an assert such as
``assert num_written_lines == num_actual_predict_examples`` fails. Report only.
"""

from __future__ import annotations

import ast

from npu_codemod.api import Base, Capture, FileContext, Rule, hookimpl

from ._words import node_words, words

PAD = "pad the final prediction batch to batch_size with dummy examples and drop their outputs"
#: Words naming what prediction produced, and what it was given.
RESULT_WORDS = frozenset(
    "written write writes wrote predicted prediction predictions preds pred predict "
    "output outputs result results logits probabilities probs".split()
)
EXAMPLE_WORDS = frozenset("example examples sample samples instance instances".split())
#: Both sides must be counts: ``len(...)``, ``num_*``, ``*_count``...
COUNT_WORDS = frozenset("len num n nb count cnt total number length size".split())


def may_count(node: ast.Assert) -> bool:
    """Could ``PredictLastBatch.visit`` report this ``assert`` (read with ``ast``)? Only
    an assert of one equality whose names say all three of a result, an example and a count:
    one side must count results and the other examples, and every word of either side is a
    word of a name in the comparison (its ``ast`` holds every name fissix's leaves do, and more:
    the names inside f-strings; keywords, which fissix's leaves also hold, say none of these).
    The unit layout marks only such asserts, so a file whose others are its only sites is
    not parsed for this rule."""
    test = node.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    found: set[str] = set()
    for inner in ast.walk(test):
        if isinstance(inner, ast.Constant):
            if inner.value is None or isinstance(inner.value, bool):
                found |= words(str(inner.value))  # None, True, False: fissix's NAME leaves
            continue
        for field in inner._fields:
            value = getattr(inner, field, None)
            if isinstance(value, str):  # Name.id, Attribute.attr, keyword.arg, arg.arg...
                found |= words(value)
    return all(not found.isdisjoint(kind) for kind in (RESULT_WORDS, EXAMPLE_WORDS, COUNT_WORDS))


class PredictLastBatch(Rule):
    id = "NPU003"
    name = "predict-last-batch"
    pack = "sess-run"
    description = "Report asserts that the number of predictions equals the number of examples."
    guide_section = "数据预处理: 推理时最后一个batch需补齐到batch size"
    guide_section_en = "Data preprocessing: at inference, pad the last batch to the batch size"
    guide_url = Rule.catalog_url(id, name)
    reports = ("Each `assert` that compares a count of written or predicted results with a count "
               "of examples (`assert num_written_lines == num_actual_predict_examples`): at "
               "inference the last batch must be padded to `batch_size` with dummy examples, "
               "whose outputs are then dropped, or the assert fails the run.")
    example = """
        import tensorflow as tf

        num_written_lines = 0
        for prediction in estimator.predict(input_fn=predict_input_fn):
            writer.write(format_prediction(prediction))
            num_written_lines += 1
        assert num_written_lines == num_actual_predict_examples
    """
    _scope = "site"  # it reads the assert alone
    _site_names = ("assert",)  # the unit layout's word for an assert that may count:
    _ast_sites = ((ast.Assert, "assert", may_count),)
    _tokens = ("assert",)
    pattern = "assert_stmt< 'assert' comparison< left=any '==' right=any > any* >"

    def visit(self, node: Base, capture: Capture, ctx: FileContext) -> None:
        sides = [node_words(capture["left"]), node_words(capture["right"])]
        if any(_counts_results(a) and _counts_examples(b) for a, b in (sides, sides[::-1])):
            ctx.report(node, "unmigrated", PAD)


def _counts_results(words: frozenset[str]) -> bool:
    return bool(words & RESULT_WORDS and words & COUNT_WORDS) and not words & EXAMPLE_WORDS


def _counts_examples(words: frozenset[str]) -> bool:
    return bool(words & EXAMPLE_WORDS and words & COUNT_WORDS)


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [PredictLastBatch()]
