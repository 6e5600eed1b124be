"""The README's shell examples as a reader runs them: parsed out of its ``sh`` blocks, each with the
output the README shows for it, and run one after another in one persistent bash, as in a terminal.

A command is a line (with its ``\\`` continuations, open quotes, here-documents and trailing pipes);
the ``# `` lines directly below it, with no blank line between, are the output the README shows for
it. Comments before a command, after a blank line or at the start of a block, are notes.

A shown output matches the command's standard output when, whitespace taken loosely (any run of it
matches any other, or none, so JSON may be wrapped), ``…`` (or ``...``) stands for anything, and each
number shown equals the actual one rounded to the digits shown (``2.94`` matches ``2.9412``). Ids,
timestamps and anything else that changes run to run are written ``…``.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Example", "Shell", "examples", "mismatch"]

_BLOCK = re.compile(r"^```(?:sh|bash)\n(.*?)^```", re.M | re.S)
_HEREDOC = re.compile(r"<<-?\s*'?(\w+)'?")
_ELLIPSIS = re.compile(r"…|\.\.\.")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w])")
_ANY_NUMBER = r"(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"


@dataclass
class Example:
    """One command of the README: the line it starts on, its text, and the output shown under it."""

    line: int
    command: str
    shown: list[str] = field(default_factory=list)


def _complete(text: str) -> bool:
    stripped = text.rstrip()
    if stripped.endswith(("\\", "|", "&&", "||")):
        return False
    try:
        shlex.split(text, comments=True)
    except ValueError:  # an open quote: the command goes on
        return False
    return True


def _command(lines: list[str], start: int) -> int:
    """The index after the last line of the command that starts at ``start``."""
    end, text = start, ""
    while end < len(lines):
        text += lines[end] + "\n"
        end += 1
        heredoc = _HEREDOC.search(lines[end - 1])
        if heredoc:
            while end < len(lines) and lines[end].strip() != heredoc.group(1):
                end += 1
            end += 1
            text = ""  # the document's lines are not shell words
        if _complete(text):
            return end
    return end


def examples(readme: str) -> list[Example]:
    """Every command of the README's ``sh``/``bash`` blocks, in order, with the output shown for it."""
    found: list[Example] = []
    for block in _BLOCK.finditer(readme):
        first = readme.count("\n", 0, block.start(1)) + 1
        lines = block.group(1).splitlines()
        index, last = 0, None
        while index < len(lines):
            line = lines[index].strip()
            if not line:
                last = None
            elif line.startswith("#"):
                if last is not None:
                    last.shown.append(line[1:].removeprefix(" "))
            else:
                end = _command(lines, index)
                last = Example(line=first + index, command="\n".join(lines[index:end]))
                found.append(last)
                index = end
                continue
            index += 1
    return found


def _segment(piece: str) -> tuple[re.Pattern[str], list[str]]:
    """A stretch of shown text between two ``…`` as a regular expression (a group per number shown),
    and the numbers it shows."""
    parts: list[str] = []
    numbers: list[str] = []
    position = 0
    for number in _NUMBER.finditer(piece):
        parts.append(_literal(piece[position : number.start()]))
        parts.append(_ANY_NUMBER)
        numbers.append(number.group())
        position = number.end()
    parts.append(_literal(piece[position:]))
    return re.compile("".join(parts), re.S), numbers


def _literal(text: str) -> str:
    return r"\s*".join(re.escape(word) for word in re.split(r"\s+", text))


def _equal_as_shown(shown: str, actual: str) -> bool:
    if "e" in shown.lower():
        return abs(float(actual) - float(shown)) <= abs(float(shown)) * 1e-6
    decimals = len(shown.split(".")[1]) if "." in shown else 0
    return round(float(actual), decimals) == round(float(shown), decimals)


Segment = tuple[re.Pattern[str], list[str]]


def _matches(segments: list[Segment], actual: str, position: int, anchored: bool) -> bool:
    """Whether ``segments`` match ``actual`` from ``position`` on, each number as shown: the first
    right there when ``anchored`` (else anywhere after), each later one anywhere after the one before,
    the last reaching the end (where ``…`` ends the shown text, anything may follow)."""
    pattern, numbers = segments[0]
    last = len(segments) == 1
    if last and not pattern.pattern:
        return True
    start = position
    while start <= len(actual):
        found = pattern.match(actual, start) if anchored else pattern.search(actual, start)
        if found is None:
            return False
        agree = all(_equal_as_shown(n, found.group(i)) for i, n in enumerate(numbers, start=1))
        if agree and (
            (last and not actual[found.end() :].strip())
            or (not last and _matches(segments[1:], actual, found.end(), anchored=False))
        ):
            return True
        if anchored:
            return False
        start = found.start() + 1
    return False


def mismatch(shown: list[str], actual: str) -> str | None:
    """Why ``actual`` is not the shown output (None when it is)."""
    pieces = _ELLIPSIS.split("\n".join(shown).strip())
    segments = [_segment(piece.strip()) for piece in pieces]
    text = actual.strip()
    if _matches(segments, text, 0, anchored=True):
        return None
    if _matches([(pattern, []) for pattern, _ in segments], text, 0, anchored=True):
        return "a number differs from the one shown"
    return "the text differs"


class Shell:
    """One bash that runs commands in turn (its variables, directory and background jobs persist),
    each command's standard output and error and exit status kept in files of ``folder``."""

    def __init__(self, folder: Path, cwd: Path, env: dict[str, str]) -> None:
        self.folder = folder
        self.count = 0
        self.process = subprocess.Popen(
            ["bash", "--noprofile", "--norc", "-s"], stdin=subprocess.PIPE, cwd=cwd, env=env, text=True
        )

    def run(self, command: str, timeout_s: float) -> tuple[int, str, str]:
        """``command`` in the shell: its exit status, standard output and standard error."""
        self.count += 1
        out, err, status = (self.folder / f"{self.count}.{kind}" for kind in ("out", "err", "rc"))
        assert self.process.stdin is not None
        self.process.stdin.write(f"{{\n{command}\n}} > {out} 2> {err} < /dev/null\necho $? > {status}.tmp\n")
        self.process.stdin.write(f"mv {status}.tmp {status}\n")
        self.process.stdin.flush()
        deadline = time.monotonic() + timeout_s
        while not status.exists():
            if self.process.poll() is not None:
                raise AssertionError(f"the shell exited ({self.process.returncode}) during: {command}")
            if time.monotonic() > deadline:
                raise AssertionError(f"no answer within {timeout_s:g} s: {command}")
            time.sleep(0.05)
        return int(status.read_text()), out.read_text(), err.read_text()

    def close(self) -> None:
        """End the shell and what it started in the background (the server)."""
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.write("kill $(jobs -p) 2>/dev/null; wait\nexit\n")
            self.process.stdin.close()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
