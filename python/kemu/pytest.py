"""pytest plugin: run every kemu launch of a test suite under kemu's checkers.

    pytest -p kemu.pytest --kemu-tool racecheck,memcheck [--kemu-schedule random:SEED]

Every kemu.Device made while the suite runs (unless it names its own tools
or schedule) gets these checkers and this schedule, and a launch whose
checkers find an error raises kemu.CheckerError, so the test that made it
fails with the report in its failure text. The `kemu_device` fixture is a
Device made that way (closed after the test)."""
import pytest

import kemu


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
