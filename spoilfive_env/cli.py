"""What every command line of the project shares: bad input gets one line and exit status 2.

argparse answers a bad value with its whole usage text and then the error; for a command with
forty options (``train.py``) the error is lost under the usage. :class:`ArgumentParser` prints
only ``PROG: error: MESSAGE (see PROG --help)`` and exits with argparse's own status, 2.
Commands check every value before any work starts and call ``parser.error`` with the flag,
the value and what is allowed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import signal
import sys
import tempfile
import threading
from pathlib import Path

from .cards import MAX_PLAYERS, MIN_PLAYERS
from .rules import Rules

BAD_USAGE = 2  # argparse's exit status for a bad command line


class ArgumentParser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` whose errors are a single line on standard error."""

    def error(self, message: str):
        """Print ``PROG: error: MESSAGE`` on one line and exit with status 2 (never returns)."""
        one_line = " ".join(str(message).split())
        self.exit(BAD_USAGE, f"{self.prog}: error: {one_line} (see {self.prog} --help)\n")


def positive_int(text: str) -> int:
    """argparse ``type``: an integer of at least 1."""
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: give a whole number of at least 1")
    return value


MAX_SEED = 2**32 - 1
"""The largest seed :func:`seed_value` takes: NumPy's global seeding and several training
libraries take 32 bits."""


def seed_value(text: str) -> int:
    """argparse ``type``: a seed, a whole number from 0 to :data:`MAX_SEED`."""
    value = _int(text)
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: give a seed from 0 to {MAX_SEED:,}")
    return value


def non_negative_int(text: str) -> int:
    """argparse ``type``: an integer of at least 0."""
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: give a whole number of at least 0")
    return value


def table_size(text: str) -> int:
    """argparse ``type``: a number of players Spoil Five takes (2 to 10)."""
    value = _int(text)
    if not MIN_PLAYERS <= value <= MAX_PLAYERS:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: Spoil Five takes {MIN_PLAYERS} to "
                                         f"{MAX_PLAYERS} players")
    return value


def table_sizes(text: str) -> list[int]:
    """argparse ``type``: comma-separated table sizes, e.g. ``3,4,5``, each 2 to 10."""
    sizes = _int_list(text, "table sizes, e.g. 3,4,5")
    bad = [n for n in sizes if not MIN_PLAYERS <= n <= MAX_PLAYERS]
    if not sizes or bad:
        raise argparse.ArgumentTypeError(f"{text!r}: table sizes must be {MIN_PLAYERS}-{MAX_PLAYERS}")
    if len(set(sizes)) != len(sizes):  # a typo, most likely: it was measured twice, or dropped
        raise argparse.ArgumentTypeError(f"{text!r}: give distinct table sizes")
    return sizes


def positive_ints(text: str) -> list[int]:
    """argparse ``type``: comma-separated whole numbers, each at least 1, e.g. ``2000,800``."""
    values = _int_list(text, "whole numbers, e.g. 2000,800")
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give whole numbers of at least 1")
    return values


def per_table_size(flag: str, sizes: list[int], values: list[int] | None, defaults: dict[int, int]) -> list[int]:
    """A flag's numbers, one for each table size of ``sizes``: ``values`` as one number for every size or one a
    size, or, where the flag was not given (``values`` None), each size's own default from ``defaults``.

    Raises:
        ValueError: neither one number nor one a size, or a size without a default; the message names the flag.
    """
    if values is None:
        missing = [size for size in sizes if size not in defaults]
        if missing:
            raise ValueError(f"--players {','.join(map(str, missing))}: give {flag} (its default is for "
                             f"{', '.join(map(str, sorted(defaults)))} players only)")
        return [defaults[size] for size in sizes]
    if len(values) == 1:
        return list(values) * len(sizes)
    if len(values) != len(sizes):
        raise ValueError(f"{flag} {','.join(map(str, values))}: give one number, or one for each of the "
                         f"{len(sizes)} table sizes")
    return list(values)


def _int_list(text: str, what: str) -> list[int]:
    parts = [part.strip() for part in text.split(",")]
    if any(parts) and not all(parts):  # "3,,4" or "3,": a number left out, not one to skip
        raise argparse.ArgumentTypeError(f"{text!r}: an empty item; give comma-separated {what}")
    try:
        return [int(part) for part in parts if part]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of {what}") from None


def comma_items(text: str) -> list[str]:
    """The items of a comma-separated list (agents by seat, ``random,greedy``), stripped.

    Raises:
        ValueError: an empty item among others (``random,,greedy``: an entry left out, which would
            move every later one to another seat). No item at all gives ``[]``, which the caller
            refuses in its own words.
    """
    items = [item.strip() for item in text.split(",")]
    if any(items) and not all(items):
        raise ValueError(f"{text!r}: an empty item; give comma-separated entries, e.g. spoiler,greedy")
    return [item for item in items if item]


def positive_float(text: str) -> float:
    """argparse ``type``: a finite number above 0."""
    value = _finite(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: give a finite number above 0")
    return value


MAX_LEARNING_RATE = 1.0
"""The largest learning rate a trainer takes (:func:`learning_rate`, ``train.py``, ``agents.distill``, the
examples): an Adam step moves each weight by about the learning rate, so above 1 only diverges (from about 1e3
the first update leaves a network of NaN, and the next rollout ends in a traceback)."""
MAX_COEF = 1_000_000
"""The largest clip, entropy and value coefficient a PPO trainer takes (``train.py``, the CleanRL example): at a
million the term already leaves the others nothing (or clips nothing); far larger ones overflow the loss's
32-bit arithmetic (a traceback, or a network of NaN)."""


def learning_rate(text: str) -> float:
    """argparse ``type``: a learning rate, a finite number above 0 and at most :data:`MAX_LEARNING_RATE`."""
    value = positive_float(text)
    if value > MAX_LEARNING_RATE:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: give a learning rate above 0, at most "
                                         f"{MAX_LEARNING_RATE:g}")
    return value


def non_negative_float(text: str) -> float:
    """argparse ``type``: a finite number of at least 0 (a loss coefficient)."""
    value = _finite(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: give a number of at least 0")
    return value


def unit_fraction(text: str) -> float:
    """argparse ``type``: a number from 0 to 1 (a discount, GAE's lambda)."""
    value = _finite(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: give a number from 0 to 1")
    return value


def finite_float(text: str) -> float:
    """argparse ``type``: any finite number, negative and zero too (a target in points)."""
    return _finite(text)


def _finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: give a finite number")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def json_text(value) -> str:
    """``value`` as strict JSON, what every ``--json`` prints: a figure with nothing to measure it on (the
    interval of a single deal, a rate with no chance to show) is ``null``. Python writes such a float as
    ``NaN``, which is not JSON (RFC 8259) and which most other parsers refuse."""
    return json.dumps(_finite_or_null(value), indent=2, allow_nan=False)


def plus_minus(value, ci, value_format: str, ci_format: str) -> str:
    """``value ± ci`` as the commands print them, ``-`` for a figure with nothing to measure it on (the interval of
    a single deal, a share with no pool won), which their JSON gives as null; the ``-`` takes the format's
    alignment and width, so that a table's columns stay aligned."""
    def shown(number, number_format):
        if number is not None and math.isfinite(number):
            return format(number, number_format)
        align, width = re.match(r"([<>^]?)[+\- ]?(\d*)", number_format).groups()
        return format("-", align + width)
    return f"{shown(value, value_format)} ± {shown(ci, ci_format)}"


def _finite_or_null(value):
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite_or_null(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_or_null(item) for item in value]
    return value


def exit_interrupted(message: str) -> None:
    """End a command on Ctrl-C: one line on standard error and status 130 (128 + SIGINT)."""
    print(f"\n{message}", file=sys.stderr)
    raise SystemExit(130)


CLOSED_PIPE = 141
"""Exit status of a command whose reader stopped reading (``... | head``): 128 + SIGPIPE, as a shell reports a
Unix tool ended by the closed pipe."""


class SettingError(Exception):
    """A bad setting outside the command line (an environment variable): every command answers it as it answers
    a bad flag, in one line with exit status 2 (:func:`run_command`), not a traceback from where it was read."""


def command_name() -> str:
    """How the running command was started: ``python -m agents.evaluate`` or the script's name."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return f"python -m {spec.name}" if spec is not None else Path(sys.argv[0]).name


def run_command(main, check_variables: bool = True) -> None:
    """Run a command's ``main()`` and exit with the status it returns; ``check_variables``: check the
    ``SPOILFIVE_*`` variables first (False for a ``main`` that checks them itself, in its parser's words).

    Python ignores SIGPIPE, so a command piped into a reader that stops early (``python -m
    agents.across_seeds ... --json | head``) would end in a ``BrokenPipeError`` traceback. This ends it
    quietly instead, with :data:`CLOSED_PIPE`, standard output pointed at the null device so that the
    interpreter's last flush does not raise again (Python's documentation, "Note on SIGPIPE").
    """
    from .backends import check_backend_variables  # here, not above: backends imports this module

    try:
        try:
            if check_variables:  # a bad SPOILFIVE_* variable is said before the command's work, not after it
                check_backend_variables()
            status = main()
        except SystemExit as stop:  # argparse's --help and its errors leave main this way
            status = stop.code
        except SettingError as error:
            print(f"{command_name()}: error: {error}", file=sys.stderr)
            status = BAD_USAGE
        sys.stdout.flush()  # what is still buffered is written here, where a closed pipe can be answered
    except BrokenPipeError:
        status = stdout_closed()
    sys.exit(status)


def stdout_closed() -> int:
    """After a ``BrokenPipeError`` on standard output: write nothing more to it; the exit status to give."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return CLOSED_PIPE


@contextlib.contextmanager
def written_whole(path):
    """Write the file at ``path`` whole or not at all: the block writes to the binary file it is
    given, under a temporary name beside ``path``, which then replaces ``path``. If the block (or the
    rename) is interrupted, by a Ctrl-C or a full disk, the temporary file is removed and ``path``
    is left as it was, so a later run never trusts a file cut short."""
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    try:
        with open(partial, "wb") as file:
            yield file
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def install_hint(extra: str) -> str:
    """How to install an extra, for an error message: from the checkout (spoilfive is not on PyPI), with torch
    kept at the pin of ``.ci/constraints.txt`` (README, "Set up")."""
    command = f'pip install -c .ci/constraints.txt -e ".[{extra}]"'
    if extra in ("fast", "leaderboard", "ray"):  # no torch in these
        return f"in the spoilfive checkout, {command}"
    return (f"in the spoilfive checkout, pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu "
            f'(the CPU-only build; README, "Set up"), then {command}')


PLOT_SUFFIXES = (".png", ".pdf", ".svg")
"""What ``--plot`` writes: the format is taken from the name."""


def refuse_bad_plot_path(parser: ArgumentParser, path: str) -> None:
    """``--plot PATH`` checked before any work: a known suffix and a place that can be written
    (``parser.error``, one line and exit status 2, otherwise)."""
    if Path(path).suffix.lower() not in PLOT_SUFFIXES:  # ".png" alone is a hidden file's name, not a suffix
        parser.error(f"--plot {path!r}: give a .png, .pdf or .svg path with a file name, e.g. ratings.png")
    why = unwritable(path)
    if why:
        parser.error(f"--plot {path!r} cannot be written: {why}")


def aligned_rows(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    """A text table's lines: each column as wide as its widest cell (a long agent name or checkpoint path keeps
    the table aligned), the first column to the left, the others (figures) to the right."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return ["  ".join(cell.ljust(width) if i == 0 else cell.rjust(width)
                      for i, (cell, width) in enumerate(zip(row, widths, strict=True))).rstrip()
            for row in [header, *rows]]


def plot_text(text: str) -> str:
    """``text`` (an agent's label, a title holding one) as matplotlib is to draw it, as written: it reads
    what stands between two ``$`` as mathtext and fails on a name such as ``m$\\foo$.pt``."""
    return str(text).replace("$", r"\$")


def save_figure(figure, path, dpi: int = 120) -> None:
    """A matplotlib ``figure`` written whole to ``path`` (:func:`written_whole`), its folders made only
    now, the format from the name's suffix; then closed, written or not (pyplot keeps open figures)."""
    import matplotlib.pyplot as plt  # loaded already by whoever drew the figure

    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with written_whole(path) as file:
            figure.savefig(file, dpi=dpi, format=path.suffix[1:].lower() or None)
    finally:
        plt.close(figure)


def plot_after_figures(parser: ArgumentParser, path: str, draw) -> int:
    """``draw(path)`` once the figures are printed, so that a plot that cannot be written, or a Ctrl-C
    while matplotlib loads and draws, loses none of them: exit status 1 with one line, or 130; else 0."""
    try:
        draw(path)
    except OSError as error:
        print(f"{parser.prog}: error: --plot {path!r} could not be written ({error.strerror or error}); "
              "the figures are above", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        exit_interrupted(f"Ctrl-C: --plot {path!r} was not written; the figures are above")
    return 0


@contextlib.contextmanager
def ctrl_c_held():
    """Hold back a Ctrl-C during the block and deliver it at its end (:class:`KeyboardInterrupt`).

    For a start-up that a Ctrl-C would cut in half, leaving behind what it had started with
    nothing to end it: a local ``ray.init`` (Ray's processes ignore SIGINT, and ``ray.shutdown``
    knows only a Ray that has finished starting). A second Ctrl-C is raised at once (a start-up
    that hangs can still be left). Outside the main thread, where Python takes no signal, it
    holds nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = []

    def hold(signum, frame):
        if held:
            raise KeyboardInterrupt
        held.append(signum)

    previous = signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if held:
        signal.raise_signal(signal.SIGINT)  # to the handler of before: Python's raises KeyboardInterrupt


OWN_FLAGS = {"num_players": "--players", "preset": "--preset"}


def rule_option(text: str) -> tuple[str, bool | int]:
    """argparse ``type`` of ``--rule KEY=VALUE``: the option's name and its value, a whole number
    or ``true``/``false`` (the :class:`~spoilfive_env.rules.Rules` options are integers and
    booleans; :class:`Rules` itself then checks the name and the range)."""
    key, sep, value = text.partition("=")
    key, value = key.strip(), value.strip()
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r} must look like KEY=VALUE, e.g. jink_bonus=1")
    if key in OWN_FLAGS:  # options the commands take as flags of their own
        raise argparse.ArgumentTypeError(f"{text!r}: {key} has its own flag, {OWN_FLAGS[key]}")
    takes = [name for name in Rules.option_names() if name not in OWN_FLAGS]
    if key not in takes:
        raise argparse.ArgumentTypeError(f"{text!r}: unknown rules option {key!r}; --rule takes {', '.join(takes)}")
    if value.lower() in ("true", "false"):
        return key, value.lower() == "true"
    try:
        return key, int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: the value {value!r} is not allowed, give a whole number "
                                         "or true/false") from None


def unwritable(path, *, folder: bool = False) -> str | None:
    """Why a file (or, with ``folder``, a folder) cannot be written at ``path``, or None if it can.

    Commands ask before any work, so that a run does not end, after minutes, on a place it cannot
    write. Nothing it makes stays: folders still to be made are only checked for, and a probe file
    is removed at once (an existing file is opened for appending, never changed)."""
    path = Path(path).expanduser().absolute()
    if path.exists() and (path.is_dir() != folder):
        return "it is a folder" if path.is_dir() else "it is a file, not a folder"
    place = path if folder else path.parent
    ancestor = place
    while not ancestor.exists():  # the folders still to be made: can the first one be made?
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"{ancestor} is a file, so no folder can be made in it"
    try:
        if ancestor != place or folder:
            with tempfile.TemporaryFile(dir=ancestor):
                pass
        else:
            existed = path.exists()
            try:
                with open(path, "ab"):
                    pass
            finally:
                if not existed and path.exists():
                    path.unlink()
    except OSError as error:
        return error.strerror or str(error)
    if not os.access(ancestor, os.W_OK | os.X_OK):
        return f"no permission to write in {ancestor}"
    return None
