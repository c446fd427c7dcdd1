"""The command line's help: what ``servicetools <command> --help`` prints."""

from __future__ import annotations

import argparse
import re

import pytest

from servicetools.cli import build_parser


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


@pytest.mark.parametrize("command", sorted(_commands()))
def test_the_examples_in_a_commands_help_keep_their_line_breaks(command: str) -> None:
    # A docstring's shell example broken with a backslash printed as one line with a run
    # of spaces in it ("--reference runs/dev.jsonl         --reference-truth"): the
    # backslash had joined the lines inside the string.
    text = _commands()[command].format_help()
    examples = [line for line in text.splitlines() if line.strip().startswith("servicetools ")]
    for line in examples:
        assert not re.search(r"\S {3,}-", line), line
