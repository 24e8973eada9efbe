"""The profile registry (conductor/profiles.py): a new profile is one entry, accepted by every
stage that takes a profile; an unknown one is refused by all of them alike."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from conductor.config import DEFAULT_POOL_FILE, Settings, SimulatedPoolRefused, refuse_accidental_simulation
from conductor.data.curate import CurationConfig
from conductor.evaluation.config import EvalConfig
from conductor.profiles import LOCAL, ProfileSpec, get_profile, names, register, unregister
from conductor.training.config import profile_config
from flows.nightly_config import NightConfig

REPO = Path(__file__).resolve().parent.parent

# One entry: a hub-curated profile that refuses simulated pools, trains like local with two changes.
TEST_PROFILE = ProfileSpec(name="test-house", summary="a test's own", curation="hub", simulated_pool=False,
                           training={**LOCAL.training, "learning_rate": 3e-3, "num_generations": 8},
                           nightly_training={"torch_threads": 3})


@pytest.fixture
def test_profile() -> Iterator[ProfileSpec]:
    register(TEST_PROFILE)
    try:
        yield TEST_PROFILE
    finally:
        unregister(TEST_PROFILE.name)


def _every_stage(name: str, tmp_path: Path) -> list[object]:
    """What each stage makes of a profile name: settings, curation, evaluation, nightly, training."""
    return [Settings(profile=name).profile, CurationConfig(profile=name).profile,
            EvalConfig(methods=["random"], profile=name).profile, NightConfig(profile=name).profile,
            profile_config(name, tmp_path).learning_rate]


def test_a_new_profile_is_one_entry_and_every_stage_accepts_it(test_profile, tmp_path) -> None:
    name = test_profile.name
    assert _every_stage(name, tmp_path) == [name, name, name, name, 3e-3]
    assert CurationConfig(profile=name).from_samples is False  # its curation source: the hub
    config = profile_config(name, tmp_path)
    assert (config.num_generations, config.model_name_or_path) == (8, str(tmp_path / "base"))
    night = NightConfig(profile=name, allow_simulated=True).resolve(Settings(profile=name))
    assert night.training_overrides["torch_threads"] == 3  # its nightly defaults
    with pytest.raises(SimulatedPoolRefused, match="the test-house profile refuses the simulated pool"):
        refuse_accidental_simulation(name, {"run": (DEFAULT_POOL_FILE, True)}, allow_simulated=False)


def test_an_unregistered_profile_is_refused_by_every_stage(tmp_path) -> None:
    assert "test-house" not in names()
    refusals = []
    for make in (lambda: Settings(profile="test-house"), lambda: CurationConfig(profile="test-house"),
                 lambda: EvalConfig(methods=["random"], profile="test-house"),
                 lambda: NightConfig(profile="test-house"), lambda: profile_config("test-house", tmp_path)):
        with pytest.raises(ValueError) as caught:
            make()
        refusals.append("unknown profile 'test-house' (one of local, small-real or production)" in str(caught.value))
    assert refusals == [True] * 5


def test_the_nightly_refuses_what_curation_refuses() -> None:
    """Every profile the nightly accepts, curation accepts (small-real curates the sample files)."""
    for name in names():
        assert NightConfig(profile=name).profile == CurationConfig(profile=name).profile == name
    assert CurationConfig(profile="small-real").from_samples and not CurationConfig(profile="production").from_samples


def test_unknown_training_keys_are_refused(tmp_path) -> None:
    typo = ProfileSpec(name="test-typo", summary="", curation="samples", simulated_pool=True,
                       training={**LOCAL.training, "learning_rat": 1e-3})
    register(typo)
    try:
        with pytest.raises(ValueError, match="profile test-typo: unknown training config keys: learning_rat$"):
            profile_config("test-typo", tmp_path)
    finally:
        unregister(typo.name)
    with pytest.raises(ValueError, match="unknown training config keys: num_generation$"):
        profile_config("local", tmp_path, num_generation=4)
    with pytest.raises(ValueError, match="already registered"):
        register(LOCAL)


def test_a_profile_is_frozen() -> None:
    with pytest.raises(TypeError):
        get_profile("local").training["learning_rate"] = 1.0  # type: ignore[index]
    with pytest.raises(AttributeError):
        get_profile("local").curation = "hub"  # type: ignore[misc]


def test_the_profile_names_are_written_once() -> None:
    """`grep` for a profile name as a string in the code finds its registry entry only."""
    found = []
    for d in ("conductor", "flows", "tasks", "server", "registry", "warehouse"):
        for path in (REPO / d).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            found += [(str(path.relative_to(REPO)), m) for m in re.findall(r"""["'](small-real|production)["']""", text)]
    assert sorted(found) == [("conductor/profiles.py", "production"), ("conductor/profiles.py", "small-real")], found
