"""Rule packs: named groups of rules, selected as a unit, some of them off by default.

A rule names its pack (:attr:`Rule.pack <npu_codemod.codemods.rule.Rule.pack>`); :data:`PACKS`
is the one table of the built-in packs, in the order the documentation lists them, with
whether each is on by default. Wherever rules are named (``--rules``, ``--disable-rule``,
``[tool.npu-codemod] rules = [...]``) a pack name stands for every rule of that pack
(:func:`expand_rule_names`), and ``default`` for the rules a run has when none is named:
those whose pack is on by default (a pack this table does not list, a third party's, is) and
that do not opt out themselves (:attr:`Rule.default_on`); :func:`default_on` answers it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from npu_codemod.codemods.rule import Rule


@dataclass(frozen=True)
class Pack:
    """One built-in pack: its name, what its rules migrate, whether a run has it by default."""

    name: str
    description: str
    default_on: bool = True
    #: Why the pack's rules go together ('' when they do not): a run with some of them and not
    #: the others is warned (:func:`partial_packs`).
    together: str = ""


PACKS: tuple[Pack, ...] = (
    Pack("sess-run", "scripts that drive tf.Session themselves (the Ascend sess.run guide)"),
    Pack("estimator", "Estimator, premade estimators, TPUEstimator and their RunConfig"),
    Pack("distributed", "Horovod and tf.distribute to the NPU's collectives (changes how the "
                        "job is launched: opt-in)", default_on=False,
         together="the NPU's ranks, hooks or optimizer while Horovod or a tf.distribute strategy "
                  "still runs the job is half a migration"),
    Pack("mixed-precision", "loss scaling and TensorFlow's automatic mixed precision"),
    Pack("keras", "Keras on TensorFlow 1.x in graph mode"),
    Pack("xla-gpu", "XLA and GPU-only settings"),
    Pack("audit", "every TensorFlow API checked against Ascend's support list"),
    Pack("tf2", "TensorFlow 2.x code to the TF 2.x adapter (npu_device), and TF 1.x code on "
                "TensorFlow 2.x through tf.compat.v1"),
    Pack("tf2-distributed", "TF 2.x distributed training onto npu.distribute (changes how "
                            "training aggregates: opt-in)", default_on=False),
)
#: The name that stands for the rules a run has when none are named (``--rules default,distributed``).
DEFAULT = "default"
_BY_NAME = {pack.name: pack for pack in PACKS}


class UnknownRuleName(ValueError):
    """A name that is neither a rule id nor a pack (the message lists them)."""


def default_on(rule: Rule) -> bool:
    """Whether a run has ``rule`` when no rule is named: its pack is on by default (a rule of
    no pack, or of a pack the table does not list, is) and the rule does not opt out
    (:attr:`Rule.default_on` False)."""
    pack = _BY_NAME.get(rule.pack)
    return rule.default_on and (pack is None or pack.default_on)


def default_rules(rules: Sequence[Rule]) -> list[Rule]:
    """The rules of ``rules`` a run has when none is named."""
    return [rule for rule in rules if default_on(rule)]


def pack_names(rules: Iterable[Rule]) -> list[str]:
    """The packs of the table, then those of ``rules`` it does not list, in first-seen order."""
    names = dict.fromkeys(pack.name for pack in PACKS)
    names.update(dict.fromkeys(rule.pack for rule in rules if rule.pack))
    return list(names)


def expand_rule_names(names: Iterable[str], rules: Sequence[Rule]) -> set[str]:
    """The ids ``names`` stand for among ``rules``: a rule id itself, a pack every rule of that
    pack (none, for a pack of the table whose rules are not installed), ``default`` the
    default rules. Anything else is an :class:`UnknownRuleName`."""
    ids: set[str] = set()
    unknown = []
    known = pack_names(rules)
    for name in names:
        if name == DEFAULT:
            ids.update(rule.id for rule in default_rules(rules))
        elif name in known:
            ids.update(rule.id for rule in rules if rule.pack == name)
        elif any(rule.id == name for rule in rules):
            ids.add(name)
        else:
            unknown.append(name)
    if unknown:
        raise UnknownRuleName(f"unknown rule id(s): {', '.join(sorted(unknown))} (nor a pack: "
                              f"{', '.join([*known, DEFAULT])}; see 'npu-codemod rules')")
    return ids


def partial_packs(enabled: Iterable[Rule], installed: Iterable[Rule]) -> list[str]:
    """A warning for each pack whose rules go together (:attr:`Pack.together`) of which some
    but not all ``installed`` rules are ``enabled``, naming the ones left out."""
    on = {rule.id for rule in enabled}
    warnings = []
    for pack in PACKS:
        ids = sorted(rule.id for rule in installed if rule.pack == pack.name)
        left_out = [rule_id for rule_id in ids if rule_id not in on]
        if pack.together and left_out and len(left_out) < len(ids):
            warnings.append(f"only part of the {pack.name} pack is enabled ({', '.join(sorted(on & set(ids)))}); "
                            f"its rules go together ({pack.together}): also enable {', '.join(left_out)}, "
                            f"e.g. --rules default,{pack.name}")
    return warnings
