"""The README shows real output: its transcripts are what the commands print today."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli import main

README = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"<!-- transcript:(\S+) -->\n```text\n\$ (.+?)\n(.*?)```\n<!-- /transcript:\1 -->", README, re.S)


def test_readme_has_transcripts():
    assert BLOCKS, "the README's first screen shows a real transcript"


@pytest.mark.parametrize("name, command, output", BLOCKS, ids=[b[0] for b in BLOCKS])
def test_transcript_matches_what_the_command_prints(name, command, output, tmp_path, monkeypatch):
    args = shlex.split(command)
    assert args[0] == "planner"
    monkeypatch.chdir(Path(__file__).parents[1])
    result = CliRunner().invoke(main, args[1:])
    assert result.exit_code == 0, result.output
    assert result.output.rstrip() == output.rstrip()


def _run_for_readme(command: str) -> str:
    result = CliRunner().invoke(main, shlex.split(command)[1:])
    if result.exit_code != 0:
        raise SystemExit(f"{command!r} failed:\n{result.output}")
    return result.output.rstrip() + "\n"


if __name__ == "__main__":  # python tests/test_readme.py: rewrite the transcripts with today's output
    import os

    os.chdir(Path(__file__).parents[1])
    text = README
    for name, command, _ in BLOCKS:
        pattern = re.compile(rf"(<!-- transcript:{re.escape(name)} -->\n```text\n\$ .+?\n).*?(```\n<!-- /transcript:)", re.S)
        text = pattern.sub(lambda m, c=command: m.group(1) + _run_for_readme(c) + m.group(2), text)
    (Path(__file__).parents[1] / "README.md").write_text(text, encoding="utf-8")
    print(f"updated {len(BLOCKS)} transcript(s)")
