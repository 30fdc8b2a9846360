"""The virtualenv holds exactly the versions pinned in requirements.txt.

scripts/deps.sh rebuilds .venv/ when requirements.txt changes; this catches a
venv that was changed by hand, or a pin that is not of the form name==version.
"""

import re
from importlib import metadata
from pathlib import Path

REQUIREMENTS = Path(__file__).resolve().parent.parent / "requirements.txt"


def pins():
    out = {}
    for line in REQUIREMENTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9._-]+)==([A-Za-z0-9.+!-]+)", line)
        assert m, f"requirements.txt: not an exact pin: {line!r}"
        out[m.group(1)] = m.group(2)
    return out


def test_installed_versions_match_pins():
    wrong = {
        name: (want, metadata.version(name))
        for name, want in pins().items()
        if metadata.version(name) != want
    }
    assert not wrong, f"installed versions differ from requirements.txt: {wrong}"


def test_bus_models_import_under_this_cocotb():
    # cocotbext-axi must be a release written for cocotb 1.x.
    import cocotb
    from cocotbext.axi import AxiStreamBus, AxiStreamSink, AxiStreamSource  # noqa: F401

    assert cocotb.__version__ == pins()["cocotb"]
