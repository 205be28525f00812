"""The integration layer: spoilfive in the libraries people already train with.

Everything here needs both the rules (:mod:`spoilfive_env`) and the players (:mod:`agents`),
so it sits above both; nothing below imports it. One small module per library, each a thin
view of the core's batch API (``SpoilFiveCore.step(actions, where=...)``):

==========================  ============================================================
module                      what it gives
==========================  ============================================================
``gymnasium_env``           ``SpoilFiveGymEnv``: one learning seat against named opponents
                            (``gymnasium.make("spoilfive/SpoilFive-v0")``)
``vector``                  ``SpoilFiveVectorEnv``: a ``gymnasium.vector.VectorEnv`` over one
                            core batch (``gymnasium.make_vec(..., "vector_entry_point")``), and
                            ``LearnerBatch``, the opponent loop both Gymnasium envs share
``opponents``               the ``opponents`` argument resolved into one agent per seat
``bench``                   learner steps/s of both Gymnasium envs, alternated
                            (``python -m spoilfive_integrations.bench``)
``sb3``                     an SB3 ``VecEnv`` over the batched core (``pip install ".[sb3]"``)
``rllib``                   a ``MultiAgentEnv`` over many games and an action-masking
                            RLModule (``pip install ".[rllib]"``)
``tianshou``                ``SeatTrajectories``: Tianshou's multi-agent on-policy algorithm
                            over each seat's own trajectory, and ``SpoilFiveTianshouVectorEnv``,
                            a Tianshou vector env over one core batch (``pip install ".[tianshou]"``)
``play``                    the terminal game (``python -m spoilfive_env.play``)
``selfplay``                ``SelfPlayRollout``: ``train.py``'s self-play rollout over core batches
``ray_training``            ``train.py --ray``'s rollout workers as Ray actors (``pip install ".[ray]"``)
==========================  ============================================================

Heavy libraries (stable-baselines3, Ray, TorchRL, Tianshou) are imported only by the module
that adapts to them, so ``import spoilfive_integrations`` costs nothing extra.
"""
