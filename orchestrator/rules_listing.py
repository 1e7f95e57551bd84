"""``npu-codemod rules``: what rules are available, where they come from, which are broken."""

from __future__ import annotations

import json
from typing import TextIO

from .run_record import rule_info
from .toolkit import Toolkit


def rules_table(toolkit: Toolkit) -> list[dict[str, str]]:
    rows = [{**rule_info(rule), "status": "ok"} for rule in toolkit.plugins.rules()]
    rows += [{"id": "-", "name": "-", "description": broken.reason, "guide_section": "",
              "plugin": broken.name, "status": "broken"} for broken in toolkit.plugins.broken]
    return rows


def print_rules(toolkit: Toolkit, fmt: str, stream: TextIO) -> None:
    rows = rules_table(toolkit)
    if fmt == "json":
        json.dump(rows, stream, indent=2, ensure_ascii=False)
        stream.write("\n")
        return
    for row in rows:
        stream.write(f"{row['id']:<8} {row['name']:<30} {row['status']:<7} {row['plugin']}\n"
                     f"         {row['description']}\n")
