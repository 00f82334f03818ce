"""A pytest plugin of scripts/triton_suite.py: every test's outcome as it happens, and a hard
limit on each test's time.

    python -m pytest -p triton_suite_plugin --suite-log run.jsonl --suite-hard-timeout 180 ...

`--suite-log`: one JSON line per test phase, written (and flushed) by the process that reports
results (the controller under pytest-xdist), so what ran is known even when the run is killed
at its budget or a worker dies: `{"id", "when": "start" | "setup" | "call" | "teardown",
"outcome", "message", "duration"}`.

`--suite-hard-timeout`: a test still running after that many seconds ends its process
(faulthandler, which also prints every thread's stack). A test stuck in a native call (a GPU
kernel that never finishes, a compile that loops) cannot be interrupted from Python, which is
all pytest-timeout's signal method can do; ending the process can. Under pytest-xdist the
controller reports the test as failed ("worker crashed") and starts a new worker; without it,
the runner sees a test that started and never ended and runs the rest again.
"""

from __future__ import annotations

import faulthandler
import json
import re
import sys

import pytest

_CONFIG: dict = {}  # the session's config: the report hooks run where no item gives it


def pytest_addoption(parser):
    parser.addoption("--suite-log", default=None, help="append each test phase as JSON here")
    parser.addoption("--suite-hard-timeout", type=float, default=0.0, help="seconds, 0: none")


def _controller(config) -> bool:
    """Whether this process reports results: not an xdist worker."""
    return not hasattr(config, "workerinput")


def _write(config, record: dict) -> None:
    path = config.getoption("--suite-log")
    if path and _controller(config):
        with open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps(record) + "\n")


def _message(report) -> str:
    """The first line of why a phase failed or skipped."""
    longrepr = report.longrepr
    if longrepr is None:
        return ""
    if isinstance(longrepr, tuple):  # a skip: (file, line, reason)
        text = str(longrepr[2])
    else:
        crash = getattr(longrepr, "reprcrash", None)
        text = crash.message if crash is not None else str(longrepr)
    lines = text.strip().splitlines()
    return re.sub(r"^Skipped: ", "", lines[0]) if lines else ""


def pytest_runtest_logstart(nodeid, location):
    config = _CONFIG.get("config")
    if config is not None:
        _write(config, {"id": nodeid, "when": "start"})


def pytest_configure(config):
    _CONFIG["config"] = config


def pytest_runtest_logreport(report):
    config = _CONFIG.get("config")
    if config is None:
        return
    record = {
        "id": report.nodeid,
        "when": report.when,
        "outcome": report.outcome,
        "message": _message(report) if report.outcome != "passed" else "",
        "duration": round(getattr(report, "duration", 0.0), 3),
    }
    _write(config, record)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    limit = item.config.getoption("--suite-hard-timeout")
    if limit > 0:
        faulthandler.dump_traceback_later(limit, exit=True, file=sys.__stderr__)
    try:
        yield
    finally:
        if limit > 0:
            faulthandler.cancel_dump_traceback_later()
