"""Checkpoint files that are not what they claim: refused with a CheckpointError, before building.

And without torch installed, asking for a trained policy says which extra to install.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from conftest import edited_checkpoint

from agents import load_agent, policy
from agents.policy import (
    CANONICAL_DIM,
    MAX_HIDDEN_LAYERS,
    MAX_HIDDEN_WIDTH,
    CheckpointError,
    PolicyNet,
    load_policy_agent,
    save_checkpoint,
)
from spoilfive_env.observation import OBS_DIM

REPO = Path(__file__).resolve().parents[1]


MODEL_CASES = [
    # (the model entry, words of the refusal)
    (["hidden", 16], "its model entry must be a dict .* got list"),
    ("local", "its model entry must be a dict .* got str"),
    (torch.zeros(3), "its model entry must be a dict .* got Tensor"),
    (None, "its model entry must be a dict .* got NoneType"),
    ({"critic": "local"}, r"model\['hidden'\] must list 1 to 16 layer widths, each 1 to 16384, got None"),
    ({"hidden": 16, "critic": "local"}, r"model\['hidden'\] must list .* got 16"),
    ({"hidden": [], "critic": "local"}, r"model\['hidden'\] must list .* got \[\]"),
    ({"hidden": [16.0], "critic": "local"}, r"got \[16.0\]"),
    ({"hidden": [True], "critic": "local"}, r"got \[True\]"),
    ({"hidden": [0], "critic": "local"}, r"got \[0\]"),
    ({"hidden": [-16], "critic": "local"}, r"got \[-16\]"),
    ({"hidden": ["16"], "critic": "local"}, r"got \['16'\]"),
    ({"hidden": [10**6], "critic": "local"}, r"each 1 to 16384, got \[1000000\]"),
    ({"hidden": [16] * (MAX_HIDDEN_LAYERS + 1), "critic": "local"}, "must list 1 to 16 layer widths"),
    ({"hidden": [16]}, r"model\['critic'\] must be one of omniscient, local, got None"),
    ({"hidden": [16], "critic": ["local"]}, r"model\['critic'\] must be one of .* got \['local'\]"),
    ({"hidden": [16], "critic": "local", "encoding": "fancy"}, r"model\['encoding'\] must be one of canonical, raw"),
    ({"hidden": [16], "critic": "local", "encoding": 1}, r"model\['encoding'\] .* got 1"),
    # well-formed headers that do not match the weights in the file
    # the file's net is hidden (16,), canonical: each misfit is named with the shape found and the one expected
    ({"hidden": [32], "critic": "local", "encoding": "canonical"},
     rf"do not fit .*: actor_first.linear.weight \(16, {CANONICAL_DIM}\) \(expected \(32, {CANONICAL_DIM}\)\)"),
    ({"hidden": [16, 16], "critic": "local", "encoding": "canonical"}, "do not fit .* missing"),
    ({"hidden": [16], "critic": "omniscient", "encoding": "canonical"}, "do not fit .* missing critic_hands"),
    ({"hidden": [16], "critic": "local", "encoding": "raw"},
     rf"do not fit .*: actor_first.linear.weight \(16, {CANONICAL_DIM}\) \(expected \(16, {OBS_DIM}\)\)"),
]


@pytest.mark.parametrize(("model", "words"), MODEL_CASES, ids=[repr(m)[:40] for m, _ in MODEL_CASES])
def test_a_bad_model_entry_is_a_checkpoint_error(tmp_path, model, words):
    path = edited_checkpoint(tmp_path, model=model)
    with pytest.raises(CheckpointError, match=words):
        load_policy_agent(path)
    with pytest.raises(ValueError, match=words):  # a CheckpointError is a ValueError: load_agent passes it on
        load_agent(str(path))


@pytest.mark.parametrize(("state_dict", "words"), [
    ([torch.zeros(2)], "its state_dict entry must map parameter names to tensors, got list"),
    ({"actor_first.linear.weight": [[0.0]]}, "must map parameter names to tensors, got dict"),
    (None, "got NoneType"),
    ({}, "do not fit .* missing"),
])
def test_a_bad_state_dict_is_a_checkpoint_error(tmp_path, state_dict, words):
    path = edited_checkpoint(tmp_path, state_dict=state_dict)
    with pytest.raises(CheckpointError, match=words):
        load_policy_agent(path)


HEADER_CASES = [
    # (header entries of the file, words of the refusal): each says what the file has and what this spoilfive has
    ({"format": "other-policy"}, r"is not a spoilfive policy checkpoint \(no format='spoilfive-policy' entry\)"),
    ({"format_version": 2}, "has checkpoint format version 2; this spoilfive reads version 1$"),
    ({"observation_version": 0}, "does not fit .*: it was trained on observation layout version 0, this "
                                 "spoilfive_env has version 1. Retrain"),
    ({"obs_dim": OBS_DIM + 1}, f"does not fit .*: its observation has {OBS_DIM + 1} features, this spoilfive_env has "
                               f"{OBS_DIM}. Retrain"),
    ({"num_actions": 106}, "does not fit .*: it has 106 actions, this spoilfive_env has 107. Retrain"),
    ({"obs_dim": None, "num_actions": None}, "its observation has None features, .*; it has None actions"),
]


@pytest.mark.parametrize(("header", "words"), HEADER_CASES, ids=[repr(h)[:40] for h, _ in HEADER_CASES])
def test_a_checkpoint_of_another_format_or_observation_or_action_table_is_refused(tmp_path, header, words):
    """The file's header must match this spoilfive: its format and format version, the observation layout it
    was trained on (version and width) and the 107 actions. Weights that happen to load do not make it fit."""
    path = edited_checkpoint(tmp_path, **header)
    with pytest.raises(CheckpointError, match=words):
        load_policy_agent(path)


def test_a_small_file_claiming_a_huge_network_is_refused_before_building_it(tmp_path, monkeypatch):
    """Widest and deepest allowed header (about 16 GiB of weights) over a file of a few kB."""
    path = edited_checkpoint(tmp_path, model={"hidden": [MAX_HIDDEN_WIDTH] * MAX_HIDDEN_LAYERS,
                                              "critic": "local", "encoding": "canonical"})
    assert path.stat().st_size < 10**6
    built_on = []
    original_init = PolicyNet.__init__

    def recording_init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        # where its weights were made (torch 2.4's get_default_device() does not see a `with torch.device` block)
        built_on.append(next(self.parameters()).device.type)

    monkeypatch.setattr(policy.PolicyNet, "__init__", recording_init)
    with pytest.raises(CheckpointError, match=r"do not fit .* \(16384, 973\)"):
        load_policy_agent(path)
    assert built_on == ["meta"], "only a shape-only (meta) network may be built before the shapes are checked"


def _junk_bytes(path: Path) -> None:
    path.write_bytes(bytes(range(256)) * 4)


def _truncated_checkpoint(path: Path) -> None:
    save_checkpoint(path, PolicyNet(hidden=(16,), critic="local"), {})
    path.write_bytes(path.read_bytes()[:200])


def _pickled_module(path: Path) -> None:
    torch.save({"model": torch.nn.Linear(2, 2)}, path)


@pytest.mark.parametrize(("write", "words"), [
    (_junk_bytes, "damaged, truncated or of another kind"),
    (_truncated_checkpoint, "damaged, truncated or of another kind"),
    (lambda path: path.write_bytes(b""), "damaged, truncated or of another kind"),
    (_pickled_module, r"pickled Python object \(torch.nn.modules.linear.Linear\)"),
])
def test_an_unreadable_file_says_what_is_wrong_and_what_a_checkpoint_is(tmp_path, write, words):
    path = tmp_path / "bad.pt"
    write(path)
    with pytest.raises(CheckpointError, match="not a readable torch checkpoint") as refused:
        load_policy_agent(path)
    message = str(refused.value)
    assert re.search(words, message), message
    assert message.endswith(f"expected {policy.CHECKPOINT_KIND}"), message


def test_a_good_checkpoint_still_loads(tmp_path):
    path = edited_checkpoint(tmp_path)
    net, data = policy.load_checkpoint(path)
    assert net.config == {"hidden": [16], "critic": "local", "encoding": "canonical"}
    assert all(value.device.type == "cpu" for value in net.state_dict().values())


def test_a_checkpoint_from_before_the_encoding_option_loads_as_the_raw_encoding(tmp_path):
    """A model entry without "encoding" was written before the canonical encoding existed: its network reads the
    raw observation, and it loads as such with its weights."""
    torch.manual_seed(0)
    net = PolicyNet(hidden=(16,), encoding="raw")
    path = tmp_path / "old.pt"
    save_checkpoint(path, net, {})
    data = torch.load(path, weights_only=True)
    del data["model"]["encoding"]
    torch.save(data, path)
    loaded, _ = policy.load_checkpoint(path)
    assert loaded.config == {"hidden": [16], "critic": "local", "encoding": "raw"}
    assert all(torch.equal(loaded.state_dict()[key], value) for key, value in net.state_dict().items())


def test_a_shipped_name_is_found_in_agents_checkpoints_and_anything_with_a_folder_is_a_path(tmp_path):
    """resolve_checkpoint: a bare name such as "ppo" is the shipped agents/checkpoints/ppo.pt; a name with a
    folder in it or ending .pt is a path as given, even where no such file is (then the refusal names that path).
    A shipped agent is called by its name, any other by its path."""
    from agents.policy import CHECKPOINT_DIR, resolve_checkpoint

    assert resolve_checkpoint("ppo") == CHECKPOINT_DIR / "ppo.pt"
    elsewhere = str(Path("runs") / "mine" / "final")
    assert resolve_checkpoint(elsewhere) == Path(elsewhere) and resolve_checkpoint("x.pt") == Path("x.pt")
    with pytest.raises(CheckpointError, match=f"^no checkpoint file at {re.escape(elsewhere)}: "):
        load_policy_agent(elsewhere)
    assert load_policy_agent("ppo").name == "ppo"
    copy = edited_checkpoint(tmp_path)
    assert load_policy_agent(copy).name == str(copy)


def test_without_torch_a_policy_says_which_extra_to_install():
    script = textwrap.dedent("""
        import sys
        sys.modules["torch"] = None  # as if torch were not installed
        from agents import load_agent
        assert load_agent("greedy", seed=0).name == "greedy"  # the baselines need no torch
        try:
            load_agent("ppo")
        except ImportError as error:
            print("REFUSED:", error)
        else:
            print("LOADED")
    """)
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "REFUSED:" in out, out
    assert 'pip install -c .ci/constraints.txt -e ".[train]"' in out  # from the checkout: not on PyPI
    assert "--index-url https://download.pytorch.org/whl/cpu" in out


def test_network_too_large_names_a_layer_too_wide_or_a_net_too_big_for_memory(monkeypatch):
    from agents.policy import MAX_HIDDEN_WIDTH, network_too_large

    assert network_too_large([256, 256]) is None
    assert network_too_large([MAX_HIDDEN_WIDTH + 1]) == (f"a layer of {MAX_HIDDEN_WIDTH + 1:,} is too wide: give "
                                                         f"widths from 1 to {MAX_HIDDEN_WIDTH:,}")
    huge = [MAX_HIDDEN_WIDTH] * 16  # about 120 GiB of weights, gradients and Adam's moments
    # A machine of 64 GiB, whatever this one has (the check was skipped on one of 100 GiB or more).
    monkeypatch.setattr(policy, "physical_memory", lambda: 64 * 2**30)
    assert re.fullmatch(r"the actor and the critic with Adam's state need about 1\d\d\.\d GiB, more than this "
                        r"machine's 64\.0 GiB", network_too_large(huge))
    assert network_too_large([256, 256]) is None
    monkeypatch.setattr(policy, "physical_memory", lambda: None)  # memory unknown: only the widths are checked
    assert network_too_large(huge) is None


def _belief_data():
    from agents.trump_belief import TrumpCountNet

    state = TrumpCountNet(3, hidden=8).state_dict()
    return {"hidden": 8, "nets": {"3": state}}, state


@pytest.mark.parametrize(("edit", "words"), [
    # each was an AttributeError, a bare int() ValueError or torch's RuntimeError, not what a belief file holds
    (lambda data, state: data.update(nets=[state]), "holds no network: its nets entry must map table sizes to "
                                                    "state dicts, got list"),
    (lambda data, state: data.update(nets={"x": state}), r"map table sizes \(2 to 10\) to networks, got the key 'x'"),
    (lambda data, state: data.update(nets={"1": state}), "got the key '1'"),
    (lambda data, state: data.update(nets={"-2": state}), "got the key '-2'"),
    (lambda data, state: data.update(hidden="x"), "its hidden entry must be a layer width from 1 to 16384, got 'x'"),
    # a few bytes claiming a network of terabytes: was built (and filled) before its weights were compared
    (lambda data, state: data.update(hidden=10**6), "from 1 to 16384, got 1000000"),
    (lambda data, state: data.update(hidden=16), r"for 3 players does not fit its header \(hidden=16\): "
                                                 r"mlp.0.weight \(8, 980\) \(expected \(16, 980\)\)"),
    (lambda data, state: data.update(nets={"3": [state]}), "for 3 players must map parameter names to tensors"),
    # was loaded, and the search then drew its deals by NaN weights
    (lambda data, state: state.update({name: torch.full_like(value, float("nan")) for name, value in state.items()}),
     "the network for 3 players holds NaN or infinite weights"),
], ids=["nets list", "size x", "size 1", "size -2", "hidden x", "hidden huge", "hidden other", "state list", "nan"])
def test_a_belief_file_that_does_not_fit_says_why_before_building_anything(tmp_path, edit, words):
    from agents.trump_belief import FORMAT, FORMAT_VERSION, SAMPLER_DEALS, load_belief
    from spoilfive_env.observation import OBS_DIM, OBSERVATION_VERSION

    data, state = _belief_data()
    data.update(format=FORMAT, format_version=FORMAT_VERSION, observation_version=OBSERVATION_VERSION,
                obs_dim=OBS_DIM, sampler_deals=SAMPLER_DEALS)
    edit(data, state)
    path = tmp_path / "belief.pt"
    torch.save(data, path)
    before = torch.get_rng_state()
    with pytest.raises(ValueError, match=words):
        load_belief(str(path))
    with pytest.raises(ValueError, match=f"belief='{path}' is not allowed: .*" + words):
        load_agent(f"pimc_ppo:samples=2:belief={path}")
    assert torch.equal(torch.get_rng_state(), before)  # no network built, not even to be thrown away
