"""report.html in a real headless Chromium: it renders, sorts, filters, logs no errors.

CI installs Debian's chromium and chromium-driver (``.ci/run``), so a missing browser is a
failure with the reason, never a skip.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from support.cli import cli
from support.git import make_repo
from support.reports import HOSTILE_NAME, make_run

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not Path(path).exists()]
    if missing:
        pytest.fail(f"{', '.join(missing)} not found: install Debian's chromium and "
                    "chromium-driver (apt-get install -y chromium chromium-driver), as .ci/run does")
    profile = tempfile.mkdtemp(prefix="npu-codemod-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def opened(browser: webdriver.Chrome, tmp_path_factory: pytest.TempPathFactory) -> webdriver.Chrome:
    report = make_run(tmp_path_factory.mktemp("browser"))
    browser.get((report / "report.html").as_uri())
    return browser


def column(browser: webdriver.Chrome, index: int) -> list[str]:
    rows = browser.find_elements(By.CSS_SELECTOR, "#findings tbody tr")
    return [row.find_elements(By.TAG_NAME, "td")[index].text for row in rows if row.is_displayed()]


def test_page_renders_with_no_console_errors(opened: webdriver.Chrome) -> None:
    assert opened.title == "npu-codemod report"
    assert opened.find_element(By.ID, "findings-migrated").text.isdigit()
    assert opened.find_elements(By.CSS_SELECTOR, "svg.chart rect.fill")
    errors = [entry for entry in opened.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []


def test_hostile_file_name_is_text_and_runs_nothing(opened: webdriver.Chrome) -> None:
    assert opened.find_elements(By.TAG_NAME, "img") == []
    assert opened.execute_script("return window.pwned === undefined")
    sites = column(opened, 1)
    assert f"{HOSTILE_NAME}:4" in sites


def test_table_sorts_by_a_column_both_ways(opened: webdriver.Chrome) -> None:
    header = opened.find_element(By.CSS_SELECTOR, "#findings thead th:nth-child(3) button")
    header.click()
    rules = column(opened, 2)
    assert rules == sorted(rules) and len(set(rules)) > 1
    header.click()
    assert column(opened, 2) == sorted(rules, reverse=True)
    assert opened.find_element(By.CSS_SELECTOR, "#findings thead th:nth-child(3)") \
        .get_attribute("aria-sort") == "descending"


def test_table_filters_by_status_and_text(opened: webdriver.Chrome) -> None:
    total = len(column(opened, 3))
    status = Select(opened.find_element(By.ID, "filter-status"))
    status.select_by_visible_text("unmigrated")
    unmigrated = column(opened, 3)
    assert unmigrated and set(unmigrated) == {"unmigrated"} and len(unmigrated) < total
    assert opened.find_element(By.ID, "shown-count").text == str(len(unmigrated))
    text = opened.find_element(By.ID, "filter-text")
    text.send_keys("noise_shape= is given")
    assert column(opened, 2) == ["NPU004 nn-dropout"]
    text.clear()
    text.send_keys(" ")  # an input event with an empty needle
    status.select_by_visible_text("all")
    assert len(column(opened, 3)) == total


# --- layout at 1,280 px, and the blocking APIs -------------------------------------------------

LONG_REPO = "a-repository-name-much-longer-than-any-column-of-the-report-would-like-it-to-be"
LONG_PATH = ("models/research/object_detection/a_directory_name_without_any_break_opportunity_in_it/"
             "train_and_evaluate_the_detection_model_on_the_npu.py")
WIDE_SCRIPT = '''import tensorflow as tf
from tensorflow.contrib import slim


def build(images, memory):
    key = "{token}"
    net = slim.conv2d(images, 64, [3, 3]); net = slim.max_pool2d(net, [2, 2]); net = slim.flatten(net); net = slim.fully_connected(net, 10)  # {comment}
    batch = memory.batch(32)
    return tf.compat.v1.is_finite(net), tf.estimator.Estimator(model_fn=build), batch
'''.format(token="x" * 150, comment="a comment that goes on " * 12)


def make_wide_run(root: Path) -> Path:
    make_repo(root / LONG_REPO, {LONG_PATH: WIDE_SCRIPT, "train.py": WIDE_SCRIPT})
    (root / "repos.txt").write_text(f"{LONG_REPO}\n", encoding="utf-8")
    for _ in range(2):  # two runs: coverage over time has a line
        cli("scan", "--repos", "repos.txt", "--report-dir", "report", "--workspace", "ws",
            "--no-progress", "--jobs", "1", cwd=root, expect=0)
    return root / "report"


@pytest.fixture(scope="module")
def wide(browser: webdriver.Chrome, tmp_path_factory: pytest.TempPathFactory) -> webdriver.Chrome:
    report = make_wide_run(tmp_path_factory.mktemp("wide"))
    browser.set_window_size(1280, 900)
    browser.get((report / "report.html").as_uri())
    for details in browser.find_elements(By.TAG_NAME, "details"):
        browser.execute_script("arguments[0].open = true", details)  # snippets shown, as when read
    return browser


def test_the_page_fits_1280_px_without_horizontal_overflow(wide: webdriver.Chrome) -> None:
    width, client, inner = wide.execute_script(
        "var d = document.documentElement; return [d.scrollWidth, d.clientWidth, window.innerWidth]")
    assert inner == 1280
    assert width <= client


def test_every_column_header_is_visible(wide: webdriver.Chrome) -> None:
    headers = wide.execute_script("""
        var right = document.documentElement.clientWidth;
        return Array.prototype.map.call(document.querySelectorAll('table th'), function (th) {
            var box = th.getBoundingClientRect();
            return [th.closest('table').id, th.textContent.trim(), box.width > 0 && box.left >= 0
                    && box.right <= right && th.scrollWidth <= th.clientWidth];
        });""")
    tables = {table for table, _, _ in headers}
    assert {"readiness", "blocking-apis", "repos", "findings"} <= tables
    assert [(table, text) for table, text, shown in headers if not shown] == []


def test_message_cells_and_code_are_not_cut_off(wide: webdriver.Chrome) -> None:
    cut = wide.execute_script("""
        var right = document.documentElement.clientWidth, cut = [];
        document.querySelectorAll('#findings tbody td, pre.snippet, #repos td, #blocking-apis td')
            .forEach(function (cell) {
                var box = cell.getBoundingClientRect();
                if (cell.scrollWidth > cell.clientWidth + 1 || box.right > right) {
                    cut.push(cell.textContent.slice(0, 60));
                }
            });
        return cut;""")
    assert cut == []
    snippets = wide.find_elements(By.CSS_SELECTOR, "pre.snippet")
    assert snippets and any("x" * 140 in s.get_attribute("textContent") for s in snippets)


def test_chart_labels_end_before_their_bars(wide: webdriver.Chrome) -> None:
    overlaps = wide.execute_script("""
        return Array.prototype.map.call(document.querySelectorAll('svg.chart g[data-label]'),
            function (g) {
                var label = g.querySelector('text.label').getBBox();
                var track = g.querySelector('rect.track').getBBox();
                return [g.getAttribute('data-label'), label.x + label.width < track.x];
            });""")
    assert overlaps and any(label == LONG_REPO for label, _ in overlaps)
    assert [label for label, before in overlaps if not before] == []


def test_a_report_only_rule_is_not_shown_as_zero_percent(wide: webdriver.Chrome) -> None:
    bar = wide.find_element(By.CSS_SELECTOR, 'svg.chart g[data-label="NPU100 api-support"]')
    assert bar.find_element(By.CSS_SELECTOR, "text.value").text == "report only"
    assert bar.find_elements(By.CSS_SELECTOR, "rect.fill") == []


def test_coverage_over_time_is_dated(wide: webdriver.Chrome) -> None:
    ticks = [tick.text for tick in wide.find_elements(By.CSS_SELECTOR, "#history-chart text.tick")]
    dated = [tick for tick in ticks if re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", tick)]
    assert len(dated) == 2  # one per run


def test_clicking_a_blocking_api_filters_the_findings(wide: webdriver.Chrome) -> None:
    total = len(column(wide, 4))
    row = wide.find_element(By.CSS_SELECTOR, '#blocking-apis tr[data-api="tf.contrib.slim"]')
    sites = int(row.find_elements(By.TAG_NAME, "td")[2].text)
    row.click()
    messages = column(wide, 4)
    assert len(messages) == sites == 8  # four slim calls on one line, in two files
    assert all("replace tf.contrib.slim." in message for message in messages)
    assert wide.find_element(By.ID, "filter-api-name").text == "tf.contrib.slim"
    assert wide.find_element(By.ID, "shown-count").text == "8"
    wide.find_element(By.CSS_SELECTOR, '#blocking-apis tr[data-api="tf.is_finite"] button').click()
    assert [m.split(" (guide")[0] for m in column(wide, 4)] == \
        ["not supported on Ascend and no migration path: replace tf.is_finite"] * 2
    wide.find_element(By.ID, "filter-api-clear").click()
    assert len(column(wide, 4)) == total
    assert not wide.find_element(By.ID, "filter-api").is_displayed()


# --- every table at 1,280 and 800 px: headers whole, cells not cut ---------------------------

HEADERS_AND_CELLS = """
    var right = document.documentElement.clientWidth, problems = [];
    document.querySelectorAll('table th').forEach(function (th) {
        var box = th.getBoundingClientRect();
        if (th.scrollWidth > th.clientWidth || box.left < 0 || box.right > right) {
            problems.push(['header', th.closest('table').id, th.textContent.trim()]);
        }
    });
    document.querySelectorAll('table td').forEach(function (td) {
        var box = td.getBoundingClientRect();
        if (td.scrollWidth > td.clientWidth + 1 || box.right > right) {
            problems.push(['cell', td.closest('table').id, td.textContent.trim().slice(0, 60)]);
        }
    });
    return problems;"""


def verified_page(report: Path) -> Path:
    """The wide run's record as ``run --verify`` would have it (a verdict, its reason and the
    migrated run's violations), re-rendered with ``npu-codemod report``: the page then has its
    verify column and verification table."""
    run = json.loads((report / "run.json").read_text())
    run["options"]["verify"] = True
    for repo in run["repos"]:
        repo["verify"] = {"verdict": "violations", "reason": "the migrated run breaks 2 NPU constraints",
                          "command": "python train.py --steps 3 --data_dir /data/imagenet/validation",
                          "steps_compared": 3, "max_rel_diff": 0.00012, "rtol": 1e-05,
                          "violations": ["dynamic shape: batch of 17 at step 3 (drop_remainder)",
                                         "tf.nn.dropout outside npu_ops"],
                          "original_violations": [], "details": []}
    verified = report.parent / "verified.json"
    verified.write_text(json.dumps(run))
    cli("report", str(verified), "--report-dir", "verified", cwd=report.parent, expect=0)
    return report.parent / "verified" / "report.html"


@pytest.mark.parametrize("width", [1280, 800])
@pytest.mark.parametrize("verified", [False, True])
def test_every_table_fits_the_window_with_whole_header_words(
        wide: webdriver.Chrome, width: int, verified: bool) -> None:
    report = Path(wide.current_url.replace("file://", "")).parent
    if verified:
        wide.get(verified_page(report).as_uri())
    wide.set_window_size(width, 900)
    try:
        assert wide.execute_script("return window.innerWidth") == width
        tables = wide.execute_script("return Array.prototype.map.call("
                                     "document.querySelectorAll('table'), function (t) { return t.id; })")
        assert ("verify" in tables) == verified
        assert wide.execute_script(HEADERS_AND_CELLS) == []
        page, client = wide.execute_script(
            "var d = document.documentElement; return [d.scrollWidth, d.clientWidth]")
        assert page <= client
    finally:
        wide.set_window_size(1280, 900)
        if verified:
            wide.get((report / "report.html").as_uri())


def test_the_merge_verdicts_come_first(wide: webdriver.Chrome) -> None:
    first = wide.find_element(By.CSS_SELECTOR, "h2")
    assert first.get_attribute("id") == "what-is-left"
    cells = wide.find_elements(By.CSS_SELECTOR, "#readiness tbody td")
    assert [cells[1].text, cells[-1].text.split(" (")[0]] == [
        "blocked", "not supported on Ascend: tf.is_finite"]  # no migration path
    assert wide.find_element(By.ID, "verdict-blocked").text == "1"
    assert wide.find_element(By.ID, "verdict-ready").text == "0"
