#!/usr/bin/env python3
"""The HTML report in a real headless Chromium, driven through ChromeDriver's WebDriver HTTP
protocol (standard library only): two real CPU runs (a baseline and one that lost a problem) are
overlaid; the page must render with no console errors and no network requests, every figure of
its summary table and every fast_p marker must equal `dicebench report --json`, the plots must
have drawn, and a candidate's source must open with one click.

Skips (exit 77) where chromium or chromedriver is missing, except in CI (CI=true), where
tools/bootstrap.sh installs them and their absence fails the test.
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

SKIP = 77


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


class WebDriver:
    """A ChromeDriver process and one headless Chromium session."""

    def __init__(self, driver, browser):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.process = subprocess.Popen([driver, f"--port={self.port}"], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                if self.request("GET", "/status")["ready"]:
                    break
            except (urllib.error.URLError, ConnectionError):
                pass
            if time.monotonic() > deadline:
                self.process.kill()
                fail("chromedriver did not become ready in 30 s")
            time.sleep(0.2)
        options = {"binary": browser,
                   "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                            "--window-size=1400,1800"]}
        capabilities = {"browserName": "chrome", "goog:chromeOptions": options,
                        "goog:loggingPrefs": {"browser": "ALL"}}
        self.session = self.request("POST", "/session", {"capabilities": {"alwaysMatch": capabilities}})["sessionId"]

    def request(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read())["value"]
        except urllib.error.HTTPError as e:
            fail(f"WebDriver {method} {path}: {e.read().decode(errors='replace')}")

    def session_request(self, method, path, body=None):
        return self.request(method, f"/session/{self.session}{path}", body)

    def open(self, url):
        self.session_request("POST", "/url", {"url": url})

    def run(self, script, *args):
        return self.session_request("POST", "/execute/sync", {"script": script, "args": list(args)})

    def click(self, css):
        element = self.session_request("POST", "/element", {"using": "css selector", "value": css})
        element_id = next(iter(element.values()))
        self.session_request("POST", f"/element/{element_id}/click", {})

    def browser_log(self):
        return self.session_request("POST", "/se/log", {"type": "browser"})

    def quit(self):
        try:
            self.session_request("DELETE", "")
        finally:
            self.process.terminate()
            self.process.wait(timeout=30)


def make_candidates(folder, lose_relu_square):
    os.makedirs(folder)
    head = "import time\nimport torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n"
    with open(f"{folder}/level_1_problem_1_sample_0_kernel.py", "w") as f:
        f.write(head + "    def forward(self, x, y):\n        return x + y\n")
    with open(f"{folder}/level_1_problem_2_sample_0_kernel.py", "w") as f:
        f.write(head + "    def forward(self, x):\n        time.sleep(0.001)\n        return torch.relu(x)"
                + ("\n" if lose_relu_square else " ** 2\n"))
    with open(f"{folder}/level_1_problem_10_sample_0.txt", "w") as f:
        f.write("I would rather not.")


def dicebench(binary, *args):
    result = subprocess.run([binary, *args], capture_output=True, text=True)
    check(result.returncode == 0, f"dicebench {' '.join(args)} failed: {result.stderr}")
    return result.stdout


def expected_figure(report, level, metric):
    """The value `dicebench report --json` gives for a summary cell, or KeyError."""
    row = report["total"] if level == "total" else next(l for l in report["levels"] if str(l["level"]) == level)
    if metric.startswith("fast_"):
        return row["fast_p"][metric[len("fast_"):]]
    if metric.startswith("pass@"):
        return row["pass_at_k"][metric[len("pass@"):]]
    return row[metric]


def shown_text(metric, value):
    if value is None:
        return "\u2013"
    if metric == "geomean_speedup":
        return f"{value:.3f}x"
    if metric in ("problems", "samples", "pending"):
        return str(int(value))
    return f"{value * 100:.1f}%"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dicebench", required=True)
    parser.add_argument("--kernelbench", required=True)
    args = parser.parse_args()

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        if os.environ.get("CI") == "true":
            fail("chromium and chromedriver are missing (tools/bootstrap.sh installs them)")
        print("skipped: chromium or chromedriver is not installed (Debian: chromium chromium-driver)")
        return SKIP

    with tempfile.TemporaryDirectory(prefix="dicebench-html-") as tmp:
        db = f"{tmp}/results.db"
        make_candidates(f"{tmp}/good", False)
        make_candidates(f"{tmp}/lost", True)
        for folder in ("good", "lost"):
            dicebench(args.dicebench, "run", "--model", f"replay:{tmp}/{folder}", "--suite", "kernelbench-l1",
                      "--kernelbench-root", args.kernelbench, "--device", "cpu", "--db", db,
                      "--set", "eval.timing_budget_s=1")
        reports = [json.loads(dicebench(args.dicebench, "report", str(run), "--db", db, "--json")) for run in (1, 2)]
        page = f"{tmp}/report.html"
        dicebench(args.dicebench, "report", "1", "2", "--db", db, "--html", page)
        html = open(page, encoding="utf-8").read()
        check("<script src" not in html and "<link rel=\"stylesheet\"" not in html, "the page loads outside files")

        web = WebDriver(driver, browser)
        try:
            web.open("file://" + page)
            check(web.run("return document.readyState") == "complete", "the page did not finish loading")

            # Every summary figure equals the report's, as data and as shown text.
            cells = web.run("return Array.from(document.querySelectorAll('#summary td[data-metric]')).map(td => "
                            "[td.dataset.run, td.dataset.level, td.dataset.metric, td.dataset.value, td.textContent, "
                            "td.getBoundingClientRect().width > 0])")
            seen = set()
            for run, level, metric, value, text, visible in cells:
                expected = expected_figure(reports[int(run)], level, metric)
                shown = None if value == "null" else float(value)
                check(shown == expected, f"run {run} level {level} {metric}: page {shown}, report {expected}")
                check(text == shown_text(metric, expected), f"run {run} level {level} {metric}: shows {text!r}")
                check(visible, f"run {run} level {level} {metric} is not displayed")
                seen.add((int(run), level, metric))
            for r, report in enumerate(reports):
                for row in report["levels"] + [report["total"]]:
                    level = "total" if row["level"] is None else str(row["level"])
                    names = ["problems", "samples", "pending", "compiled_rate", "correct_rate", "geomean_speedup"]
                    names += [f"fast_{p}" for p in row["fast_p"]] + [f"pass@{k}" for k in row["pass_at_k"]]
                    for name in names:
                        check((r, level, name) in seen, f"the page lacks run {r} level {level} {name}")

            # The fast_p curve's markers sit at the report's values.
            markers = web.run("return Array.from(document.querySelectorAll('circle.fast-p-marker')).map(c => "
                              "[c.dataset.run, c.dataset.p, c.dataset.value])")
            check(len(markers) == 2 * 5, f"expected 10 fast_p markers, found {len(markers)}")
            for run, p, value in markers:
                expected = reports[int(run)]["total"]["fast_p"][p]
                check(float(value) == expected, f"fast_{p} marker of run {run}: {value}, report {expected}")

            # The plots drew: each has a size and its lines and points.
            plots = web.run("return Array.from(document.querySelectorAll('svg.plot')).map(s => "
                            "[s.id, s.getBBox().width, s.querySelectorAll('polyline, circle').length])")
            check(len(plots) == 2, f"expected the fast_p curve and one speedup plot, found {plots}")
            for plot_id, width, marks in plots:
                check(width > 0 and marks > 0, f"plot {plot_id} is empty")

            # A candidate's source opens with one click; sorting by a column runs without errors.
            web.click("#problems tbody tr details summary")
            opened = web.run("var d = document.querySelector('#problems tbody tr details'); "
                             "var pre = d.querySelector('pre'); "
                             "return [d.open, pre.getBoundingClientRect().height > 0, pre.textContent]")
            check(opened[0] and opened[1], "the candidate's source did not open")
            check("class ModelNew" in opened[2], "the opened source is not the candidate")
            web.click("#problems thead th:nth-child(1)")
            web.click("#problems thead th:nth-child(1)")
            first = web.run("return document.querySelector('#problems tbody tr').dataset.problem")
            check(first == "10", f"sorting by problem, descending, put problem {first} first")

            resources = web.run("return performance.getEntriesByType('resource').map(e => e.name)")
            check(resources == [], f"the page fetched {resources}")
            problems = [e for e in web.browser_log() if e.get("level") in ("SEVERE", "WARNING")]
            check(not problems, f"console messages: {problems}")
        finally:
            web.quit()
    print(f"ok: the HTML report renders in Chromium; its {len(cells)} figures and {len(markers)} fast_p markers "
          "match dicebench report")
    return 0


if __name__ == "__main__":
    sys.exit(main())
