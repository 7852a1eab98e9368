"""Issue 35, item 7: control characters a trial prints reach no HTML or Markdown output.

A skill whose script prints terminal escapes, a bell and a C1 control beside its answer
runs a real study (reference agent, local sandbox) with its report; every page and
Markdown file written holds none of them (each shows as a visible stand-in instead).
"""

from __future__ import annotations

import shutil

import pytest
from support.studies import FIXTURE_SKILL, needs_bwrap, run_cli, study_overrides

from aces_bench.core.text import CONTROL, printable

pytestmark = [pytest.mark.timeout(300)]

NOISE = "\x1b[2J\x1b]0;owned\x07\x9b6n\x00\x7f"


def test_printable_keeps_text_and_shows_every_control():
    assert printable("a\tb\nc") == "a\tb\nc"
    assert printable("line\r\n") == "line\n"
    shown = printable(NOISE)
    assert not CONTROL.search(shown)
    assert shown.startswith("\u241b[2J\u241b]0;owned\u2407\ufffd6n\u2400\u2421")


@needs_bwrap
def test_a_trial_printing_escapes_and_bells_leaves_no_control_character_in_the_report(tmp_path):
    skill = tmp_path / "noisy" / FIXTURE_SKILL.name
    shutil.copytree(FIXTURE_SKILL, skill)
    script = next((skill / "scripts").glob("*.py"))
    script.write_text(script.read_text() + f"print({NOISE!r}, flush=True)\n")
    out = tmp_path / "out"
    proc = run_cli(f"output_dir={out}", *study_overrides(skill=skill, root_parent=tmp_path), "report=true",
                   timeout=240)
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-3000:]
    trajectories = b"".join(p.read_bytes() for p in out.rglob("*.json") if "agent" in p.parts)
    assert b"\\u001b[2J" in trajectories or b"\x1b[2J" in trajectories  # the noise did reach the records
    pages = [p for p in out.rglob("*") if p.suffix in (".html", ".md") and p.is_file()]
    assert any(p.name == "index.html" for p in pages)
    dirty = {str(p.relative_to(out)): len(CONTROL.findall(p.read_text(errors="replace"))) for p in pages}
    assert not {k: v for k, v in dirty.items() if v}, dirty
    shown = "".join(p.read_text() for p in pages)
    assert "\u241b[2J" in shown  # what the trial printed is still shown, made visible
