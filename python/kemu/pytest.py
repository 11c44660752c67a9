"""pytest plugin: run every kemu launch of a test suite under kemu's checkers.

    pytest -p kemu.pytest --kemu-tool racecheck,memcheck [--kemu-schedule random:SEED]

Every kemu.Device made while the suite runs (unless it names its own tools
or schedule) gets these checkers and this schedule, and a launch whose
checkers find an error raises kemu.CheckerError, so the test that made it
fails with the report in its failure text. The `kemu_device` fixture is a
Device made that way (closed after the test).

Numba: where numba-cuda is installed, the plugin with --kemu-tool also
runs the suite's `@cuda.jit` launches on kemu (kemu.numba.enable, before
the tests import numba.cuda), with the same checkers; a test during which
they found a new error fails with the checkers' report."""
import importlib.util
import os
import tempfile

import pytest

import kemu

_snapshot = None   # the file kemu's CUDA runtime writes its findings to (KEMU_CHECK_SNAPSHOT_FILE)
_seen_errors = 0


def pytest_addoption(parser):
    group = parser.getgroup("kemu", "kemu GPU kernel emulator")
    group.addoption("--kemu-tool", default="", metavar="TOOLS",
                    help="checkers for every kemu launch: memcheck,racecheck,initcheck,synccheck")
    group.addoption("--kemu-schedule", default=None, metavar="MODE",
                    help="warp schedule of every kemu device: default or random:SEED")


def pytest_configure(config):
    tools = [t for t in config.getoption("--kemu-tool").split(",") if t]
    for t in tools:
        if t not in ("memcheck", "racecheck", "initcheck", "synccheck"):
            raise pytest.UsageError(f"--kemu-tool: unknown checker {t!r} (memcheck, racecheck, initcheck, synccheck)")
    kemu._DEFAULTS["tools"] = tuple(tools)
    kemu._DEFAULTS["schedule"] = config.getoption("--kemu-schedule")
    if tools and importlib.util.find_spec("numba") is not None:
        _enable_numba(tools, config.getoption("--kemu-schedule"))


def _enable_numba(tools, schedule):
    global _snapshot
    import kemu.numba
    try:
        kemu.numba.enable(tuple(tools), schedule)
    except RuntimeError:
        return  # kemu's CUDA libraries are not there: Numba stays as it was
    fd, _snapshot = tempfile.mkstemp(prefix="kemu-pytest-", suffix=".snapshot")
    os.close(fd)
    os.unlink(_snapshot)
    os.environ["KEMU_CHECK_SNAPSHOT_FILE"] = _snapshot


def _read_snapshot():
    """(errors, report text) of kemu's CUDA runtime's findings so far."""
    try:
        with open(_snapshot, "rb") as f:
            head = f.readline().split()
            if len(head) != 4 or head[0] != b"kemu-check-snapshot":
                return 0, ""
            return int(head[1]), f.read(int(head[3])).decode("utf-8", "replace")
    except OSError:
        return 0, ""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    global _seen_errors
    outcome = yield
    rep = outcome.get_result()
    if rep.when != "call" or not _snapshot:
        return
    errors, text = _read_snapshot()
    if errors > _seen_errors:
        _seen_errors = errors
        if rep.passed:
            rep.outcome = "failed"
            rep.longrepr = "kemu's checkers found errors in this test's Numba launches:\n" + text


def pytest_unconfigure(config):
    kemu._DEFAULTS.clear()


def pytest_report_header(config):
    tools = kemu._DEFAULTS.get("tools") or ("none",)
    return f"kemu {kemu.version()}: checkers {','.join(tools)}, schedule {kemu._DEFAULTS.get('schedule') or 'default'}"


@pytest.fixture
def kemu_device():
    dev = kemu.Device()
    try:
        yield dev
    finally:
        dev.close()
