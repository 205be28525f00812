"""spoilfive: a fast, rule-exact reinforcement-learning environment for Spoil Five."""

from .actions import CLAIM, DECLINE_ROB, JINK, NUM_ACTIONS, ROB_FIRST, action_str
from .cards import card_index, card_str
from .core import SpoilFiveCore
from .determinize import games_from_information, sample_hidden
from .env import env, raw_env
from .observation import OBS_DIM, decode_observation
from .registration import register_environments
from .rules import PRESETS, Rules

__version__ = "0.5.0"  # with pyproject.toml and CHANGELOG.md

register_environments()  # "spoilfive/spoil_five-v0" (PettingZoo), "spoilfive/SpoilFive-v0" (Gymnasium)

__all__ = [
    "CLAIM", "DECLINE_ROB", "JINK", "NUM_ACTIONS", "OBS_DIM", "PRESETS", "ROB_FIRST", "Rules",
    "SpoilFiveCore", "action_str", "card_index", "card_str", "decode_observation", "env", "games_from_information",
    "raw_env", "register_environments", "sample_hidden",
]
