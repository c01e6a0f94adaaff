"""The web view in headless Chromium (Debian's chromium and chromium-driver,
driven by python3-selenium) against a real tiletuned with auth on and a
real finished host job: the charts render, the numbers on the page are the
API's, a job name holding <script> shows as text, a cancel without a
writer token is refused, and the file `tiletune report --html` writes opens
from disk as the same page. Registered apart from the client's tests
(tests/python/CMakeLists.txt): it skips when the browser is missing, unless
TILETUNE_REQUIRE_BROWSER is set (CMake sets it where it found the browser,
as CI does after deploy/install-deps.sh).

TILETUNE_WEB_SCREENSHOT=PATH also writes the job page's screenshot there."""

import importlib.util
import io
import json
import os
import pathlib
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request

import grpc
import pytest

import tiletune
from tiletune.v1 import jobs_pb2, tiletune_pb2, tiletune_pb2_grpc

ALICE = "tt-alice-browser-8c1f3e5a7b"  # may change things (auth_writers)
BOB = "tt-bob-browser-4d2b6f8a0c"  # may only read
HOSTILE_NAME = "<script>window.__pwned = 1</script><img src=x onerror=window.__pwned=2>"
CEILING = 120  # seconds: only a hang takes this long


def _browser_or_skip():
    missing = [name for name in ("chromium", "chromedriver") if shutil.which(name) is None]
    if importlib.util.find_spec("selenium") is None:
        missing.append("python3-selenium")
    if missing:
        message = "the web view's browser test needs " + ", ".join(missing) + \
            " (deploy/install-deps.sh installs them)"
        if os.environ.get("TILETUNE_REQUIRE_BROWSER"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module", autouse=True)
def needs_browser():
    """Before any daemon starts: nothing to do here without the browser."""
    _browser_or_skip()


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    bin_dir = pathlib.Path(os.environ["TILETUNE_BIN_DIR"])
    data = tmp_path_factory.mktemp("tiletuned-web")
    (data / "tokens").write_text(f"alice {ALICE}\nbob {BOB}\n")
    ready = data / "ready"
    log = open(data / "tiletuned.log", "w")
    process = subprocess.Popen(
        [str(bin_dir / "tiletuned"), "--data-dir", str(data), "--listen", "127.0.0.1:0",
         "--metrics-listen", "127.0.0.1:0", "--ready-file", str(ready), "--host-cpus", "1",
         "--host-openblas-baseline", "false", "--auth-tokens-file", str(data / "tokens"), "--auth-writers", "alice"],
        stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 300
    while not ready.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("tiletuned did not start: " + (data / "tiletuned.log").read_text())
        time.sleep(0.02)
    fields = dict(line.split("=", 1) for line in ready.read_text().splitlines() if "=" in line)
    yield fields
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 0
    log.close()


def _submit(stub, spec):
    request = tiletune_pb2.SubmitJobRequest(spec=spec)
    return stub.SubmitJob(request, metadata=[("authorization", "Bearer " + ALICE)],
                          timeout=60).job_id


def _api(http, path, token=None, method="GET"):
    request = urllib.request.Request(f"http://{http}{path}", method=method)
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


@pytest.fixture(scope="module")
def jobs(daemon):
    stub = tiletune_pb2_grpc.TuningServiceStub(grpc.insecure_channel(daemon["grpc"]))
    # The decode GEMM and seed of test_client.py: a tuned winner in a few variants.
    finished = jobs_pb2.JobSpec(name=HOSTILE_NAME, strategy=jobs_pb2.STRATEGY_RANDOM, seed=21)
    finished.kernels.add().CopyFrom(
        tiletune.key("gemm", {"m": 1, "n": 512, "k": 512}, chain=["bias", "relu"]))
    finished.budget.max_variants = 6
    finished_id = _submit(stub, finished)
    # One that runs until cancelled (as tests/support's OccupyDevice).
    running = jobs_pb2.JobSpec(name="long", strategy=jobs_pb2.STRATEGY_EXHAUSTIVE)
    running.kernels.add().CopyFrom(tiletune.key("gemm", {"m": 512, "n": 512, "k": 512}))
    running.budget.max_variants = 200
    running.budget.max_seconds = 3600
    running_id = _submit(stub, running)
    deadline = time.monotonic() + 600
    while _api(daemon["metrics"], f"/api/jobs/{finished_id}")[1]["state"] != "JOB_SUCCEEDED":
        assert time.monotonic() < deadline, "the host job did not finish"
        time.sleep(0.2)
    yield finished_id, running_id
    _api(daemon["metrics"], f"/api/jobs/{running_id}/cancel", ALICE, "POST")


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--window-size=1300,1900"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    yield driver
    driver.quit()


def _wait(driver, condition, what):
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait
    # A polling page redraws: an element read may be replaced under the read.
    return WebDriverWait(driver, CEILING, poll_frequency=0.1,
                         ignored_exceptions=(NoSuchElementException,
                                             StaleElementReferenceException)).until(
        lambda d: condition(d), message=what)


def _text(driver, selector):
    from selenium.webdriver.common.by import By
    return driver.find_element(By.CSS_SELECTOR, selector).text


def _click(driver, selector):
    """Clicks the element if it is there; the jobs page redraws its table as
    it polls, so an element found may be gone by the click."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    try:
        found = driver.find_elements(By.CSS_SELECTOR, selector)
        if found:
            found[0].click()
        return bool(found)
    except StaleElementReferenceException:
        return False


def test_a_finished_job_page_draws_the_apis_numbers_and_keeps_names_as_text(
        daemon, jobs, browser):
    from selenium.webdriver.common.by import By
    http = daemon["metrics"]
    finished_id, _ = jobs
    browser.get(f"http://{http}/#/job/{finished_id}")
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "[data-field=decision]"),
          "the job page did not render")

    status, job = _api(http, f"/api/jobs/{finished_id}")
    assert status == 200
    status, trials = _api(http, f"/api/jobs/{finished_id}/items/0/trials?page_size=1000")
    assert status == 200
    item = job["items"][0]
    record = trials["record"]

    # The name is shown as it is, as text: no script of it ran, no element of it exists.
    assert _text(browser, "[data-field=job-name]") == HOSTILE_NAME
    assert browser.execute_script("return window.__pwned === undefined")
    assert len(browser.find_elements(By.CSS_SELECTOR, "main script, main img")) == 0

    assert _text(browser, "[data-field=state]") == "succeeded"
    assert _text(browser, "[data-field=trial-count]") == str(len(trials["trials"]))
    assert _text(browser, "[data-field=benchmarked]") == str(item["benchmarked"])
    assert _text(browser, "[data-field=winner]") == record["winner"].replace("WINNER_", "").lower()
    assert _text(browser, "[data-field=speedup]") == f"{record['speedup']:.2f}×"

    # One dot per timed trial and parameter, and a drawn convergence curve.
    timed = [t for t in trials["trials"] if t.get("timing", {}).get("median_us", 0) > 0]
    dots = browser.find_elements(By.CSS_SELECTOR, "svg[data-chart^=param-] circle")
    assert len(dots) == sum(len(t["params"]) for t in timed) > 0
    curve = browser.find_element(By.CSS_SELECTOR, "svg[data-chart=convergence-evaluations] path")
    assert curve.get_attribute("d").count("L") == len(trials["trials"]) - 1

    png = browser.get_screenshot_as_png()
    from PIL import Image
    image = Image.open(io.BytesIO(png)).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50, "the screenshot is blank"
    # The status colours of the dots are on it: ok green and slower grey-blue.
    assert any(rgb == (0x7f, 0x9b, 0xb3) or rgb == (0x2a, 0x9d, 0x3f) for _, rgb in colours) or \
        len(dots) == 0
    if os.environ.get("TILETUNE_WEB_SCREENSHOT"):
        pathlib.Path(os.environ["TILETUNE_WEB_SCREENSHOT"]).write_bytes(png)


def test_a_running_job_page_follows_the_job(daemon, jobs, browser):
    from selenium.webdriver.common.by import By
    http = daemon["metrics"]
    _, running_id = jobs
    browser.get(f"http://{http}/#/job/{running_id}")
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "[data-item='0']"),
          "the running job's page did not render")
    assert _text(browser, "[data-field=state]") in ("queued", "running")
    # It polls: the trial count it shows grows as trials land, with no reload.
    shown = _wait(browser, lambda d: [int(_text(d, "[data-field=trial-count]"))], "no count")[0]
    _wait(browser, lambda d: int(_text(d, "[data-field=trial-count]")) > shown,
          "the page did not follow the job's trials")
    assert browser.find_elements(By.CSS_SELECTOR, f"button[data-cancel='{running_id}']")


def test_a_cancel_without_a_writer_token_is_refused(daemon, jobs, browser):
    http = daemon["metrics"]
    _, running_id = jobs
    for token, refusal in ((None, "cancel refused: 401"), (BOB, "cancel refused: 403")):
        browser.get(f"http://{http}/#/jobs")
        browser.execute_script(
            "arguments[0] ? sessionStorage.setItem('tiletune-token', arguments[0])"
            " : sessionStorage.removeItem('tiletune-token')", token)
        browser.refresh()
        _wait(browser, lambda d: _click(d, f"button[data-cancel='{running_id}']"),
              "no cancel button")
        _wait(browser, lambda d: refusal in _text(d, "#status"), refusal)
        assert _api(http, f"/api/jobs/{running_id}")[1]["state"] in ("JOB_QUEUED", "JOB_RUNNING")


def test_the_shared_report_opens_from_disk_with_the_same_page(daemon, jobs, browser, tmp_path):
    from selenium.webdriver.common.by import By
    finished_id, _ = jobs
    page = tmp_path / "job.html"
    cli = pathlib.Path(os.environ["TILETUNE_BIN_DIR"]) / "tiletune"
    written = subprocess.run([str(cli), "--server", daemon["grpc"], "report", finished_id,
                              "--html", str(page)], capture_output=True, text=True, timeout=120)
    assert written.returncode == 0, written.stderr
    browser.get(page.as_uri())
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "[data-field=decision]"),
          "the shared page did not render")
    assert _text(browser, "[data-field=job-name]") == HOSTILE_NAME
    assert browser.execute_script("return window.__pwned === undefined")
    # Two scripts: the data and the page's own; nothing of the name became one.
    assert len(browser.find_elements(By.CSS_SELECTOR, "script")) == 2
    assert HOSTILE_NAME in browser.title
    status, trials = _api(daemon["metrics"], f"/api/jobs/{finished_id}/items/0/trials?page_size=1000")
    assert status == 200
    assert _text(browser, "[data-field=trial-count]") == str(len(trials["trials"]))
    assert _text(browser, "[data-field=speedup]") == f"{trials['record']['speedup']:.2f}×"
    assert browser.find_elements(By.CSS_SELECTOR, "svg[data-chart^=param-] circle")


def test_records_and_devices_pages_show_the_apis_entries(daemon, jobs, browser):
    from selenium.webdriver.common.by import By
    http = daemon["metrics"]
    finished_id, _ = jobs
    status, records = _api(http, "/api/records?op=gemm")
    assert status == 200
    record = next(r for r in records["records"] if r["job_id"] == finished_id)
    browser.get(f"http://{http}/#/records?op=gemm&winner=WINNER_TUNED")
    row = _wait(browser, lambda d: [r for r in d.find_elements(By.CSS_SELECTOR, "tr")
                                    if finished_id in r.text], "no row of the job's record")[0]
    assert f"{record['speedup']:.2f}×" in row.text
    # The host has no known ceilings: a chart of achieved TFLOP/s, said to be only that.
    assert browser.find_elements(By.CSS_SELECTOR, "svg[data-chart=roofline] circle")
    assert "No ceilings are known" in browser.find_element(By.TAG_NAME, "main").text

    browser.get(f"http://{http}/#/devices")
    _wait(browser, lambda d: "cpu:0" in d.find_element(By.TAG_NAME, "main").text, "no devices")
    status, devices = _api(http, "/api/devices")
    assert status == 200
    text = browser.find_element(By.TAG_NAME, "main").text
    assert devices["daemon"] in text and devices["backends"][0]["name"] in text
