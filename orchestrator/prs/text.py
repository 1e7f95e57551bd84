"""The title and description of a pull request, rendered from Jinja2 templates.

The defaults are package data (``templates/pr_title.j2``, ``templates/pr_body.md.j2``);
``--pr-title`` (a template string) and ``--pr-body-file`` (a template file) replace them and
get the same variables: ``repo``, ``slug``, ``branch``, ``branch_prefix``, ``base``,
``group`` (name, owners; None unless ``--split-by``), ``files``, ``migrated`` (rule_id,
rule_name, description, count), ``unmigrated`` (path, line, rule_id, rule_name, message,
url), ``omitted``, ``guide_sections`` (rule_id, rule_name, guide_section, guide_section_en,
``guide``: both titles, ``guide_url``: http(s) or ''), ``tool`` and ``verify`` (the
verification of ``run --verify``: verdict, reason, steps_compared, max_rel_diff, violations,
original_violations, command...; None without it), ``merge`` (the repository's merge verdict:
verdict, reason; codemods/merge_verdict.py), ``left`` (the sites that need a person, counted as
every report counts them) and ``compliant`` (sites already in NPU form).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional

from npu_codemod import __version__
from npu_codemod.codemods.findings import Finding
from npu_codemod.codemods.merge_verdict import MergeVerdict
from npu_codemod.codemods.rule import guide_title
from npu_codemod.codemods.sites import SiteCounts, rule_sites
from npu_codemod.orchestrator.results import ChangeGroup
from npu_codemod.orchestrator.run_record import RuleRecord
from npu_codemod.reports.links import safe_http

if TYPE_CHECKING:  # imported when templates are loaded: a run without PRs never needs Jinja2 here
    import jinja2

#: Rows of the unmigrated table before the rest is only counted (forges cap a body at ~64 KB).
MAX_ROWS = 200


class TemplateError(Exception):
    """A user template that cannot be read or compiled: one line."""


def _environment(loader: jinja2.BaseLoader) -> jinja2.Environment:
    import jinja2

    env = jinja2.Environment(loader=loader, autoescape=False, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["cell"] = lambda text: " ".join(str(text).replace("|", "\\|").split())
    env.filters["code"] = lambda text: f"`{text}`"
    return env


@dataclass(frozen=True)
class PrTemplates:
    """The compiled title and body templates of a run."""

    title: jinja2.Template
    body: jinja2.Template

    def render(self, context: Mapping[str, Any]) -> tuple[str, str]:
        title = " ".join(self.title.render(context).split())
        return title, self.body.render(context).strip() + "\n"


def load_templates(title: Optional[str] = None, body_file: Optional[str] = None) -> PrTemplates:
    """The built-in templates, or the user's; TemplateError names the bad one."""
    import jinja2

    builtin = _environment(jinja2.PackageLoader("npu_codemod.orchestrator.prs", "templates"))
    user = _environment(jinja2.BaseLoader())
    try:
        title_template = user.from_string(title) if title else builtin.get_template("pr_title.j2")
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"--pr-title is not a valid template: {exc.message}") from None
    if not body_file:
        return PrTemplates(title_template, builtin.get_template("pr_body.md.j2"))
    try:
        text = Path(body_file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TemplateError(f"cannot read --pr-body-file {body_file!r}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        return PrTemplates(title_template, user.from_string(text))
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"{body_file}:{exc.lineno}: not a valid template: {exc.message}") from None


def pr_context(
    repo: str,
    slug: str,
    branch: str,
    base: str,
    findings: Iterable[Finding],
    files: Iterable[str],
    rules: Mapping[str, RuleRecord],
    link: Callable[[str, int], str],
    group: Optional[ChangeGroup] = None,
    branch_prefix: str = "",
    verify: Optional[Mapping[str, Any]] = None,
    merge: Optional[MergeVerdict] = None,
) -> dict[str, Any]:
    """The template variables for one PR; ``link(path, line)`` is a web link on the branch."""
    findings = list(findings)
    counts = Counter(rule_id for rule_id, _ in rule_sites(findings).elements())
    sites = SiteCounts.of_findings(findings)
    unmigrated = [f for f in findings if f.status == "unmigrated"]
    seen = sorted({f.rule_id for f in findings if f.status != "error"})
    return {
        "repo": repo, "slug": slug, "branch": branch, "branch_prefix": branch_prefix, "base": base,
        "group": group, "files": sorted(files), "tool": f"npu-codemod {__version__}",
        "migrated": [{**_rule(rules, rule_id), "count": counts[rule_id]} for rule_id in sorted(counts)],
        "unmigrated": [{**f.to_dict(), "url": link(f.path, f.line)} for f in unmigrated[:MAX_ROWS]],
        "omitted": max(0, len(unmigrated) - MAX_ROWS),
        "guide_sections": [_rule(rules, rule_id) for rule_id in seen],
        "verify": verify,
        "merge": merge, "left": sites.left, "compliant": sites.compliant,
    }


def _rule(rules: Mapping[str, RuleRecord], rule_id: str) -> dict[str, str]:
    info = rules.get(rule_id) or RuleRecord(rule_id)
    section, section_en = info.guide_section, info.guide_section_en
    return {"rule_id": rule_id, "rule_name": info.name, "description": info.description,
            "guide_section": section, "guide_section_en": section_en,
            "guide": guide_title(section_en, section), "guide_url": safe_http(info.guide_url) or ""}
