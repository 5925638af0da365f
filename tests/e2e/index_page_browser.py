#!/usr/bin/env python3
"""The matrix page in a real browser: Debian's headless Chromium, driven by selenium.

  index_page_browser.py FABUILD ARTEFACT_DIR

fabuild builds a wheelhouse (example 0.1.0 and 0.2.0 x cp311, cp312, cp313; the cp313 cells
fail), then the page is loaded from file:// and over HTTP on 127.0.0.1 and checked as a person
would use it: the grid shows every cell built or failed, failed cells link to their logs, the
pip lines point at the variant index, typing "cu130 cp312" in the filter leaves that column,
the timeline has a bar per cell with its MAX_JOBS, and the browser logs no error. Screenshots
are kept in ARTEFACT_DIR.

Selenium comes from pip's configured index into a virtualenv kept under
~/.cache/fabuild-test/; Chromium and chromedriver from scripts/install-deps.sh.
FABUILD_SKIP_BROWSER_TESTS=1 skips (exit 77); otherwise anything missing is a failure.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import index_support as support  # noqa: E402

# Debian's chromium, else a Chrome on PATH with its chromedriver (GitHub's Ubuntu runners).
CHROMIUM = next((p for p in ("/usr/bin/chromium", shutil.which("chromium") or "", shutil.which("google-chrome") or "")
                 if p and os.path.exists(p)), "/usr/bin/chromium")
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
VENV = os.path.expanduser("~/.cache/fabuild-test/browser-venv")
check, FAILURES, CHECKS = support.check, support.FAILURES, support.CHECKS


def venv_python():
    """The cached virtualenv's Python with selenium in it, made on first use."""
    python = os.path.join(VENV, "bin", "python")
    if subprocess.run([python, "-c", "import selenium"], capture_output=True).returncode if os.path.exists(python) else 1:
        shutil.rmtree(VENV, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet", "selenium"], check=True)
    return python


def browser(profile):
    """Chromium with its profile in `profile` (removed with the test's directory: without it,
    chromedriver leaves a profile in the system's temporary directory on every run)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
                "--window-size=1500,1100", "--user-data-dir=" + profile]:
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)


def errors_in_log(driver):
    return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def visible(driver, css):
    return [e for e in driver.find_elements("css selector", css) if e.is_displayed()]


def type_filter(driver, text):
    box = driver.find_element("id", "filter")
    box.clear()
    if text:
        box.send_keys(text)
    else:  # clear() sends no input event
        driver.execute_script("arguments[0].dispatchEvent(new Event('input'))", box)


def check_page(driver, url, house, artefacts, name):
    driver.get(url)
    check(driver.title == "Wheelhouse", f"{name}: the page loads (title {driver.title!r})")
    heads = [h.text.replace("\n", " ") for h in visible(driver, "#grid thead th[data-col]")]
    check(heads == ["cu130 cp311", "cu130 cp312", "cu130 cp313"], f"{name}: columns are CUDA x Python ({heads})")
    rows = [r.text for r in visible(driver, "#grid tbody th")]
    check(rows == ["example0.1.0 · torch2.11", "example0.2.0 · torch2.11"], f"{name}: rows are version x torch ({rows})")
    built = visible(driver, ".entry.built")
    failed = visible(driver, ".entry.failed")
    check(len(built) == 4 and len(failed) == 2, f"{name}: 4 built and 2 failed cells shown ({len(built)}, {len(failed)})")
    check("4 built" in driver.find_element("css selector", ".counts").text, f"{name}: the counts say 4 built")
    # The index links are words apart, so that a long list of them wraps rather than widening the page.
    indexes = driver.find_element("css selector", "p.indexes").text
    check("(every wheel) cu130/torch2.11/simple/" in indexes, f"{name}: the pip index links are words apart ({indexes})")

    for entry in failed:
        links = entry.find_elements("css selector", "a.log")
        href = links[0].get_attribute("href") if links else ""
        ident = entry.get_attribute("data-id")
        check(href.endswith(f"logs/{ident}.log"), f"{name}: failed {ident} links its log ({href})")
        if href.startswith("file://"):
            log = urllib.parse.unquote(urllib.parse.urlparse(href).path)
            check(os.path.isfile(log) and "ran out of memory" in open(log).read(), f"{name}: that log is the cell's")

    pip = built[0].find_element("css selector", ".pip code").text
    base = url.rsplit("/", 1)[0] + "/"
    check(pip.lower().startswith(f"pip install {support.PROJECT}=={support.VERSION} --index-url {base}cu130/torch2.11/simple/".lower()),
          f"{name}: the pip line names the variant index where the page is ({pip})")
    sha = built[0].find_element("css selector", "button.copy[data-copy]").get_attribute("data-copy")
    check(len(sha) == 64, f"{name}: the full sha256 is there to copy")
    built[0].find_element("css selector", ".pip button.copy").click()

    bars = driver.find_elements("css selector", "#timeline g.bar")
    texts = " ".join(t.get_attribute("textContent") for t in driver.find_elements("css selector", "#timeline text"))
    check(len(bars) == 6 and "MAX_JOBS=1" in texts and "budget 8.0 GB" in texts,
          f"{name}: the timeline has a bar per cell with MAX_JOBS and the memory budget ({len(bars)} bars)")
    driver.save_screenshot(os.path.join(artefacts, f"{name}-page.png"))
    timeline = driver.find_element("id", "timeline")
    driver.execute_script("arguments[0].scrollIntoView()", timeline)
    timeline.screenshot(os.path.join(artefacts, f"{name}-timeline.png"))

    type_filter(driver, "cu130 cp312")
    heads = [h.text.replace("\n", " ") for h in visible(driver, "#grid thead th[data-col]")]
    check(heads == ["cu130 cp312"], f"{name}: 'cu130 cp312' leaves one column ({heads})")
    check(len(visible(driver, ".entry.built")) == 2 and not visible(driver, ".entry.failed"),
          f"{name}: ... with the two cp312 wheels and no failed cell")
    check("2 of 6 cells match" in driver.find_element("id", "shown").text, f"{name}: the filter says how many match")
    driver.save_screenshot(os.path.join(artefacts, f"{name}-filtered.png"))
    type_filter(driver, "failed 0.2.0")
    check(len(visible(driver, ".entry.failed")) == 1 and len(visible(driver, "#grid tbody tr")) == 1,
          f"{name}: 'failed 0.2.0' leaves the one failed cell of 0.2.0")
    type_filter(driver, "cu999")
    check(visible(driver, "#nomatch") != [], f"{name}: a filter nothing matches says so")
    type_filter(driver, "")
    check(len(visible(driver, ".entry")) == 6, f"{name}: clearing the filter shows every cell again")
    errors = errors_in_log(driver)
    check(not errors, f"{name}: no errors in the browser's console ({errors})")


def in_venv(fabuild, artefacts):
    os.makedirs(artefacts, exist_ok=True)
    work = tempfile.mkdtemp(prefix="fabuild-page-")
    try:
        house, code, output = support.build_wheelhouse(fabuild, work, ["cp311", "cp312", "cp313"], fail="cp313",
                                                       versions=("0.1.0", "0.2.0"))
        if not check(code == 1 and "fabuild: index:" in output, f"the build fails for cp313 only and makes the page (exit {code})"):
            print(output)
            return 1
        driver = browser(os.path.join(work, "chromium-profile"))
        server = None
        try:
            check_page(driver, "file://" + os.path.join(os.path.abspath(house), "index.html"), house, artefacts, "file")
            server, base = support.serve(house)
            check_page(driver, base + "index.html", house, artefacts, "http")
        finally:
            driver.quit()
            if server:
                server.shutdown()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"screenshots in {artefacts}")
    print(f"index_page_browser: {CHECKS[0] - len(FAILURES)} passed, {len(FAILURES)} failed")
    return 1 if FAILURES else 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--in-venv":
        return in_venv(sys.argv[2], sys.argv[3])
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    if os.environ.get("FABUILD_SKIP_BROWSER_TESTS") == "1":
        print("skipped: FABUILD_SKIP_BROWSER_TESTS=1")
        return 77
    for tool in (CHROMIUM, CHROMEDRIVER):
        if not check(os.access(tool, os.X_OK), f"{tool} is installed (scripts/install-deps.sh installs it)"):
            return 1
    start = time.monotonic()
    r = subprocess.run([venv_python(), os.path.abspath(__file__), "--in-venv", sys.argv[1], sys.argv[2]])
    print(f"took {time.monotonic() - start:.1f}s")
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
