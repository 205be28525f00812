"""Where a game stands: the phase codes shared by the core and the observation."""

PHASE_ROB, PHASE_PLAY, PHASE_JINK, PHASE_DONE = 0, 1, 2, 3
PHASE_NAMES = ("rob", "play", "jink", "done")
