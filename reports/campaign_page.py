"""``campaign.html``: the campaign on one self-contained page (no script, no network), written
by ``npu-codemod status``: the counts, a burndown over the points of ``campaign.jsonl``
(repositories merged, with a PR open, closed, migrated without a PR, failed, waiting), the
counts per team and the pull requests waiting longest for review. Autoescaped: repository
names and URLs are data; a URL that is not http(s) is shown, never linked."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any, Mapping, Sequence

import jinja2

from npu_codemod.codemods.merge_verdict import VERDICTS

from .atomic import write_atomic
from .links import safe_http

CAMPAIGN_PAGE = "campaign.html"
SERIES = ("merged", "open", "closed", "migrated", "failed", "waiting")
COLOURS = {"merged": "#2e7d32", "open": "#1565c0", "closed": "#757575", "migrated": "#8e24aa",
           "failed": "#c62828", "waiting": "#ef6c00"}
WIDTH, HEIGHT, PAD = 640, 220, 30

_TEMPLATE = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined).from_string("""\
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>npu-codemod campaign</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; } td, th { padding: .2em .8em; border-bottom: 1px solid #ddd; text-align: left; }
td.n { text-align: right; } .legend span { margin-right: 1em; } .chart { border: 1px solid #ddd; }
</style>
</head>
<body>
<h1>Campaign</h1>
<p id="counts">{{ counts.repos }} repositories:
{% for name in series %}{{ counts[name] }} {{ labels[name] }}{{ ", " if not loop.last }}{% endfor %}
(as of {{ now }})</p>
<p id="verdicts">By merge verdict: {% for name in verdicts %}{{ counts.get(name, 0) }} {{ name }}{{ ", " if not loop.last }}{% endfor %}.</p>
<h2>Burndown</h2>
<svg class="chart" id="burndown" role="img" aria-label="repositories by state over time" width="{{ width }}" height="{{ height }}" viewBox="0 0 {{ width }} {{ height }}">
<text x="4" y="{{ pad + 4 }}" font-size="11">{{ top }}</text><text x="4" y="{{ height - pad + 4 }}" font-size="11">0</text>
<line x1="{{ pad }}" y1="{{ height - pad }}" x2="{{ width - pad }}" y2="{{ height - pad }}" stroke="#bbb"/>
{% for line in lines %}<polyline fill="none" stroke="{{ line.colour }}" stroke-width="2" points="{{ line.points }}"><title>{{ line.label }}</title></polyline>
{% endfor %}
</svg>
<p class="legend">{% for line in lines %}<span style="color: {{ line.colour }}">&#9632; {{ line.label }}</span>{% endfor %}
({{ points|length }} point(s), one per state of the campaign)</p>
<h2>Per team</h2>
<table id="teams"><thead><tr><th>team</th><th>open</th><th>merged</th><th>closed</th></tr></thead><tbody>
{% for team, states in teams %}<tr><td>{{ team }}</td><td class="n">{{ states.open }}</td><td class="n">{{ states.merged }}</td><td class="n">{{ states.closed }}</td></tr>
{% else %}<tr><td colspan="4">no pull requests</td></tr>{% endfor %}
</tbody></table>
<h2>Waiting longest for review</h2>
<table id="waiting"><thead><tr><th>repo</th><th>pull request</th><th>waiting</th><th>checks</th></tr></thead><tbody>
{% for pr in waiting %}<tr><td>{{ pr.repo }}</td><td>{% if pr.link %}<a href="{{ pr.link }}">#{{ pr.number }}</a>{% else %}#{{ pr.number }} {{ pr.url }}{% endif %}</td><td class="n">{{ pr.days }} day(s)</td><td>{{ pr.checks }}</td></tr>
{% else %}<tr><td colspan="4">none waiting</td></tr>{% endfor %}
</tbody></table>
</body>
</html>
""")
LABELS = {"merged": "merged", "open": "PR open", "closed": "PR closed", "migrated": "migrated without a PR",
          "failed": "failed", "waiting": "waiting for a later run"}


def burndown(points: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """One polyline per series over the points, oldest left (a single point: a short flat line)."""
    top = max([1, *(p["counts"].get("repos", 0) for p in points)])
    step = (WIDTH - 2 * PAD) / max(1, len(points) - 1)
    lines = []
    for name in SERIES:
        xy = [(PAD + i * step, HEIGHT - PAD - p["counts"].get(name, 0) * (HEIGHT - 2 * PAD) / top)
              for i, p in enumerate(points)]
        if len(xy) == 1:
            xy.append((xy[0][0] + 10, xy[0][1]))
        lines.append({"label": LABELS[name], "colour": COLOURS[name],
                      "points": " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)})
    return lines


def write_campaign_page(report_dir: Path, counts: Mapping[str, int], points: Sequence[Mapping[str, Any]],
                        prs: Sequence[Any], now: _dt.datetime) -> Path:
    from npu_codemod.orchestrator.prs.campaign import days_since, team_counts, waiting_longest

    waiting = [{"repo": pr.repo, "number": pr.number, "url": pr.url, "link": safe_http(pr.url),
                "days": days_since(pr.created_at, now), "checks": pr.checks} for pr in waiting_longest(prs)]
    page = _TEMPLATE.render(counts=counts, series=SERIES, verdicts=VERDICTS, labels=LABELS, now=now.isoformat(timespec="minutes"),
                            width=WIDTH, height=HEIGHT, pad=PAD, lines=burndown(points), points=points,
                            top=max([1, *(p["counts"].get("repos", 0) for p in points)]),
                            teams=list(team_counts(prs).items()), waiting=waiting)
    path = report_dir / CAMPAIGN_PAGE
    write_atomic(path, page)
    return path
