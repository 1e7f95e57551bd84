"""``npu-codemod rules``: what rules are available, where they come from, which are broken.

One row per rule (status ``ok``) and one per broken plugin (status ``broken``, the reason in
place of the description), so a package that failed to load is never silently missing; or the
rule catalog of ``docs/rules.md`` for those rules (``--format markdown``, see rule_catalog.py).
Each rule shows its pack and whether a run has it by default (``default``: ``on``/``off``,
``default_on`` in JSON; ``selected``: whether the configuration at hand selects it).
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from npu_codemod.codemods.rule_settings import settings_fields
from npu_codemod.orchestrator.loaded_rules import LoadedRules
from npu_codemod.orchestrator.rule_catalog import catalog_markdown
from npu_codemod.orchestrator.run_record import rule_info
from npu_codemod.plugins.packs import default_on

COLUMNS = ("id", "name", "pack", "default", "status", "plugin", "distribution", "version")
MARKDOWN_COMMAND = "npu-codemod rules --format markdown"


def rules_table(loaded_rules: LoadedRules) -> list[dict[str, Any]]:
    plugins = loaded_rules.plugins
    selected = {rule.id: rule for rule in loaded_rules.rules}  # configured copies
    rows = [{**rule_info(rule, plugins), "status": "ok", "default_on": default_on(rule),
             "default": "on" if default_on(rule) else "off", "selected": rule.id in selected,
             "settings": settings_fields(selected.get(rule.id, rule))} for rule in plugins.rules()]
    rows += [{"id": "-", "name": "-", "pack": "-", "default_on": False, "default": "-",
              "description": broken.reason, "guide_section": "",
              "guide_section_en": "", "guide_url": "", "rewrites": "", "reports": "",
              "plugin": broken.name, "distribution": broken.distribution,
              "version": broken.version, "settings": [], "status": "broken", "selected": False}
             for broken in plugins.broken]
    return rows


def print_rules(loaded_rules: LoadedRules, fmt: str, stream: TextIO) -> None:
    if fmt == "markdown":
        stream.write(catalog_markdown(loaded_rules, loaded_rules.plugins.rules(), MARKDOWN_COMMAND))
        for broken in loaded_rules.plugins.broken:
            stream.write(f"\nBroken plugin, its rules are missing: {broken.name}: {broken.reason}\n")
        return
    rows = rules_table(loaded_rules)
    if fmt == "json":
        json.dump(rows, stream, indent=2, ensure_ascii=False)
        stream.write("\n")
        return
    widths = {column: max(len(column), *(len(str(row[column])) for row in rows))
              for column in COLUMNS}
    stream.write(_line({column: column.upper() for column in COLUMNS}, widths))
    for row in rows:
        stream.write(_line(row, widths))
        stream.write(f"    {row['description']}\n")
        for setting in row["settings"]:
            stream.write(f"    setting {setting['name']} = {setting['value']!r}: {setting['type']} "
                         f"(default {setting['default']!r})\n")


def _line(row: dict[str, Any], widths: dict[str, int]) -> str:
    return "  ".join(f"{str(row[column]) or '-':<{widths[column]}}" for column in COLUMNS).rstrip() + "\n"
