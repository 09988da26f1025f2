"""The README (and docs/export.md) show real output: their transcripts are what the commands print today."""

from __future__ import annotations

import os
import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli import main

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
#: Documents whose ``<!-- transcript:name -->`` blocks are checked (and rewritten by ``python tests/test_readme.py``).
DOCUMENTS = ("README.md", "docs/export.md")
_BLOCK = re.compile(r"<!-- transcript:(\S+) -->\n```text\n\$ (.+?)\n(.*?)```\n<!-- /transcript:\1 -->", re.S)
BLOCKS = [(doc, *block) for doc in DOCUMENTS for block in _BLOCK.findall((ROOT / doc).read_text(encoding="utf-8"))]


def test_readme_and_export_docs_have_transcripts():
    assert {doc for doc, *_ in BLOCKS} == set(DOCUMENTS), "the README's first screen shows a real transcript"


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


@pytest.mark.parametrize("doc, name, command, output", BLOCKS, ids=[f"{b[0]}:{b[1]}" for b in BLOCKS])
def test_transcript_matches_what_the_command_prints(doc, name, command, output, tmp_path):
    assert shlex.split(command)[0] == "planner"
    assert _run_for_readme(command, tmp_path) == output.rstrip() + "\n"


if __name__ == "__main__":  # python tests/test_readme.py: rewrite the transcripts with today's output
    import tempfile

    for doc in DOCUMENTS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        for _, name, command, _ in (b for b in BLOCKS if b[0] == doc):
            with tempfile.TemporaryDirectory() as tmp:
                out = _run_for_readme(command, Path(tmp))
            pattern = re.compile(
                rf"(<!-- transcript:{re.escape(name)} -->\n```text\n\$ .+?\n).*?(```\n<!-- /transcript:)", re.S
            )
            text = pattern.sub(lambda m, o=out: m.group(1) + o + m.group(2), text)
        (ROOT / doc).write_text(text, encoding="utf-8")
    print(f"updated {len(BLOCKS)} transcript(s) in {', '.join(DOCUMENTS)}")


def test_python_examples_in_the_readme_run_as_shown():
    import doctest

    parser = doctest.DocTestParser()
    for i, block in enumerate(re.findall(r"```python\n(.*?)```", README, re.S)):
        test = parser.get_doctest(block, {}, f"README python block {i}", "README.md", 0)
        runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
        runner.run(test)
        assert runner.failures == 0 and runner.tries > 0
