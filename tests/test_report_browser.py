"""report.html in a real headless Chromium: it renders, sorts, filters, logs no errors.

CI installs Debian's chromium and chromium-driver (``.ci/run``), so a missing browser is a
failure with the reason, never a skip.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

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
