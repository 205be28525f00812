"""Versioned entry point, as PettingZoo names its environments: ``spoil_five_v0.env()``."""

from .env import env, raw_env

__all__ = ["env", "raw_env"]
