"""The README's Python examples run as written, in order, and say what they claim.

The quickstarts are the way in for a newcomer: a renamed argument or attribute must fail here, not
in a user's first session. Each ``python`` block of README.md runs in one namespace, top to bottom
(the fixed-deal block continues the AEC one), and the blocks' stated results are checked; a line
``expression  # value`` whose value is a Python literal is evaluated and compared.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks(text: str) -> list[str]:
    return [match.group(1) for match in re.finditer(r"```python\n(.*?)```", text, re.S)]


def stated_values(block: str):
    """``(expression, value)`` for each line ``expression  # literal`` of a block."""
    for line in block.splitlines():
        code, sep, comment = line.partition("#")
        if not sep or not code.strip():
            continue
        try:
            value = ast.literal_eval(comment.strip())
            ast.parse(code.strip(), mode="eval")
        except (ValueError, SyntaxError):
            continue  # a comment in words, or a statement
        yield code.strip(), value


def test_the_readme_examples_run_in_order_and_say_what_they_claim():
    blocks = python_blocks(README.read_text())
    assert len(blocks) >= 4, "the README lost its quickstarts"
    namespace: dict = {}
    checked = 0
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 (the README's own code)
        for expression, value in stated_values(block):
            assert eval(expression, namespace) == value, expression  # noqa: S307
            checked += 1
    assert checked >= 2  # card_index("5H") -> 30 and card_str(30) -> "5H"
    game = namespace["game"]  # the AEC quickstart, then the fixed deal on the same env
    assert game.unwrapped.core.dealer[0] == 3 and game.agents == game.possible_agents
    eldest_hand = [card for card in range(52) if game.unwrapped.core.holder[0, card] == 0]
    assert sorted(namespace["card_str"](card) for card in eldest_hand) == sorted(["5S", "JS", "AH", "KS", "QS"])
    rewards, done = namespace["rewards"], namespace["done"]  # the batch quickstart's last step
    assert rewards.shape == (4096, 4) and done.shape == (4096,) and rewards.dtype == np.float32
