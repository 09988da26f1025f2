"""The README shows real output: its transcripts are what the commands print today."""

from __future__ import annotations

import os
import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli import main

README = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"<!-- transcript:(\S+) -->\n```text\n\$ (.+?)\n(.*?)```\n<!-- /transcript:\1 -->", README, re.S)


def test_readme_has_transcripts():
    assert BLOCKS, "the README's first screen shows a real transcript"


ROOT = Path(__file__).parents[1]


def _run_for_readme(command: str, workdir: Path) -> str:
    """Run a README command as a new user would: in a fresh folder holding a copy of examples/."""
    shutil.copytree(ROOT / "examples", workdir / "examples", dirs_exist_ok=True)
    old = Path.cwd()
    os.chdir(workdir)
    try:
        result = CliRunner().invoke(main, shlex.split(command)[1:])
    finally:
        os.chdir(old)
    assert result.exit_code == 0, f"{command!r} failed:\n{result.output}"
    return result.output.rstrip() + "\n"


@pytest.mark.parametrize("name, command, output", BLOCKS, ids=[b[0] for b in BLOCKS])
def test_transcript_matches_what_the_command_prints(name, command, output, tmp_path):
    assert shlex.split(command)[0] == "planner"
    assert _run_for_readme(command, tmp_path) == output.rstrip() + "\n"


if __name__ == "__main__":  # python tests/test_readme.py: rewrite the transcripts with today's output
    import tempfile

    text = README
    for name, command, _ in BLOCKS:
        with tempfile.TemporaryDirectory() as tmp:
            out = _run_for_readme(command, Path(tmp))
        pattern = re.compile(
            rf"(<!-- transcript:{re.escape(name)} -->\n```text\n\$ .+?\n).*?(```\n<!-- /transcript:)", re.S
        )
        text = pattern.sub(lambda m, o=out: m.group(1) + o + m.group(2), text)
    (ROOT / "README.md").write_text(text, encoding="utf-8")
    print(f"updated {len(BLOCKS)} transcript(s)")


def test_python_examples_in_the_readme_run_as_shown():
    import doctest

    parser = doctest.DocTestParser()
    for i, block in enumerate(re.findall(r"```python\n(.*?)```", README, re.S)):
        test = parser.get_doctest(block, {}, f"README python block {i}", "README.md", 0)
        runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
        runner.run(test)
        assert runner.failures == 0 and runner.tries > 0
