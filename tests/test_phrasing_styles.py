"""Phrasing styles (conductor/data/synthetic/styles.py) and the held-out phrasings set: the bank is
unchanged, the held-out style shares no fixed sentence with the training styles, the re-dressed
set is the held-out split's problems, and the simulated pool scores a re-dressed problem exactly
as its original."""

from __future__ import annotations

import hashlib
import re

import pytest

from conductor.config import REPO_ROOT
from conductor.data.synthetic import generate_bank, split_bank
from conductor.data.synthetic.styles import HELDOUT_STYLE, STYLES, TRAINING_STYLES, fixed_sentences
from conductor.training.compare import ORACLE_STRATEGIES, score, single_text
from conductor.training.dataset import PoolSampling, build_rows, training_pool
from conductor.training.problems import bank_splits, take_per_domain, heldout_problems, training_phrasings

POOL = REPO_ROOT / "deployments" / "pools" / "local.yaml"

# A regression guard of DATA, not of behaviour: the sha256 of generate_bank(2400, seed=0) as JSON
# lines, recorded on main before the phrasing styles were added (commit cc464a6). Every figure,
# test and the held-out split depend on this bank; a style must be an extra, never a change of
# the default draw. Change it only on purpose, with every figure re-measured.
BANK_2400_SHA256 = "1d706361340478f2ecbfdc63173c5fb28e29fb8043e8f23aafe8108d18665245"


def _sha(problems) -> str:  # noqa: ANN001
    return hashlib.sha256("".join(p.model_dump_json() + "\n" for p in problems).encode()).hexdigest()


def test_the_default_bank_is_byte_identical_to_mains() -> None:
    assert _sha(generate_bank(2400, 0)) == BANK_2400_SHA256
    assert _sha(generate_bank(2400, 0, phrasing="bank")) == BANK_2400_SHA256


def test_styles_share_no_fixed_sentence() -> None:
    names = list(STYLES)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            shared = fixed_sentences(a) & fixed_sentences(b)
            assert not shared, f"{a} and {b} share {sorted(shared)}"
    assert HELDOUT_STYLE not in TRAINING_STYLES


def test_heldout_texts_hold_no_sentence_of_a_training_style() -> None:
    """Every fixed sentence of the bank's and the plain style (contexts, labels, answer-format
    requests) is absent from every held-out-phrasings question: no answer-format request, no
    template sentence a training style adds."""
    trained = set().union(*(fixed_sentences(s) for s in TRAINING_STYLES))
    trained = {s for s in trained if len(s) > 3}  # "q:" and the like occur inside words
    bank = {p.id: p for p in heldout_problems("bank")}
    for p in heldout_problems("heldout"):
        text = p.question.casefold()
        found = [s for s in trained if s in text]
        assert not found, f"{p.id}: {found} in {p.question!r}"
        assert p.question != bank[p.id].question


def test_heldout_phrasings_are_the_heldout_split_in_other_words() -> None:
    """Same ids, order, answers, choices, tests and meta (plus the style's name) as the bank's held-
    out split; every text distinct within the set."""
    bank, typed = bank_splits().test, heldout_problems("heldout")
    assert [p.id for p in typed] == [p.id for p in bank] == [p.id for p in heldout_problems("bank")]
    for a, b in zip(bank, typed):
        assert (a.answer, a.choices, a.tests, a.source, a.domain) == (b.answer, b.choices, b.tests, b.source, b.domain)
        assert {**a.meta, "phrasing": HELDOUT_STYLE} == b.meta
    assert len({" ".join(p.question.casefold().split()) for p in typed}) == len(typed)
    # the split is a property of the problem, whatever its wording
    assert [p.id for p in split_bank(generate_bank(2400, 0, phrasing=HELDOUT_STYLE))[1]] == [p.id for p in bank]


def test_training_phrasings_mix_training_styles_and_refuse_the_heldout_one() -> None:
    train = bank_splits().train[:200]
    mixed = training_phrasings(train, TRAINING_STYLES)
    assert [p.id for p in mixed] == [p.id for p in train]
    styles = {p.meta.get("phrasing", "bank") for p in mixed}
    assert styles == set(TRAINING_STYLES)
    with pytest.raises(ValueError, match="held-out"):
        training_phrasings(train, ("bank", HELDOUT_STYLE))


@pytest.mark.parametrize("strategy", ["single", "oracle + 3 attempts + aggregator"])
def test_the_simulator_scores_a_redressed_problem_as_its_original(strategy: str) -> None:
    """The same workflow on the held-out problems in either wording: every verdict, answer and
    call the same (the simulated workers recognise a problem by its text, then decide by its id)."""
    ids = {p.id for p in take_per_domain(bank_splits().test, 40, seed=3)}
    results = []
    for phrasings in ("bank", "heldout"):
        problems = [p for p in heldout_problems(phrasings) if p.id in ids]
        pool = training_pool(POOL, problems, latency_scale=0)
        rows = build_rows(problems, pool, PoolSampling(), seed=0)
        if strategy == "single":
            texts = [single_text(k % 3, r.problem) for k, r in enumerate(rows)]
        else:
            texts = [ORACLE_STRATEGIES[strategy](1, r.problem) for r in rows]
        results.append(score(texts, rows, pool))
    bank, typed = results
    assert bank.n == typed.n == 40
    found = [(t.verdict.correct if t.verdict else None) for t in typed.traces]
    assert found == [(t.verdict.correct if t.verdict else None) for t in bank.traces]
    assert [t.answer for t in typed.traces] == [t.answer for t in bank.traces]
    assert typed.calls_per_question == bank.calls_per_question
    assert [t.usage.output_tokens for t in typed.traces] == [t.usage.output_tokens for t in bank.traces]
    assert 0.0 < bank.accuracy < 1.0  # a mix of right and wrong answers, so the comparison can fail


def test_cli_bank_writes_the_heldout_phrasings(tmp_path) -> None:  # noqa: ANN001
    from typer.testing import CliRunner

    from conductor.cli import app
    from conductor.data.schema import Problem

    out = tmp_path / "typed.jsonl"
    result = CliRunner().invoke(app, ["data", "bank", "--out", str(out), "--split", "heldout", "--phrasing", "typed"])
    assert result.exit_code == 0, result.output
    written = [Problem.model_validate_json(line) for line in out.read_text().splitlines()]
    assert [p.model_dump() for p in written] == [p.model_dump() for p in heldout_problems("heldout")]
    bad = CliRunner().invoke(app, ["data", "bank", "--out", str(out), "--phrasing", "shouty"])
    assert bad.exit_code == 2 and "typed" in bad.output


def test_bare_writes_math_out_instead_of_typesetting_it() -> None:
    """The `bare` training style: no `$` and no LaTeX command in any math question (the kind of
    task has to be read from the words, as in typed questions); the same problems and answers."""
    bank = {p.id: p for p in generate_bank(600, 0) if p.domain == "math"}
    bare = [p for p in generate_bank(600, 0, phrasing="bare") if p.domain == "math"]
    assert [p.id for p in bare] == list(bank)
    typeset = [p for p in bank.values() if "$" in p.question]
    assert len(typeset) > len(bank) / 4  # the bank typesets much of its math
    for p in bare:
        # no LaTeX command, and a `$` only as a price ("$60"), never around math
        assert "\\" not in p.question and re.fullmatch(r"(?:[^$]|\$\d)*", p.question), p.question
        assert p.answer == bank[p.id].answer
