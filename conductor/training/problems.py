"""Where training gets its problems: the generated bank (conductor/data/synthetic), ~2,400
problems over the four domains. Its train split trains (SFT, GRPO, and a small validation
slice for early stopping); its held-out split is only evaluated, never selected on.

The shipped sample rows (`local_problems`) are ~10 per source: too few to learn from, kept for
the eval-source comparison in benchmarks/learning.py."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from conductor.data.loaders import load_source
from conductor.data.schema import Problem
from conductor.data.synthetic import cached_bank_split
from conductor.data.sources import EVAL_SOURCES, TRAIN_SOURCES


@dataclass(frozen=True)
class ProblemSplits:
    """train: what SFT and GRPO see; validation: early stopping's held-out slice (of the bank's
    train split); test: the bank's held-out split (final figures only)."""

    train: list[Problem]
    validation: list[Problem]
    test: list[Problem]


# Which wording the held-out problems are asked in: the bank's own, or the held-out style (a
# generator nothing trains on; conductor/data/synthetic/styles.py).
PHRASINGS = ("bank", "heldout")


def heldout_problems(phrasings: str = "bank", *, n: int = 2400, seed: int = 0) -> list[Problem]:
    """The bank's held-out split (`bank_splits().test`), asked in the bank's words ("bank") or in
    the held-out style's ("heldout": the same problems, ids, answers and order, other text)."""
    from conductor.data.synthetic.styles import DEFAULT_STYLE, HELDOUT_STYLE

    if phrasings not in PHRASINGS:
        raise ValueError(f"phrasings must be one of {', '.join(PHRASINGS)}, not {phrasings!r}")
    return list(cached_bank_split(n, seed, DEFAULT_STYLE if phrasings == "bank" else HELDOUT_STYLE)[1])


def training_phrasings(problems: Sequence[Problem], styles: Sequence[str], *, n: int = 2400,
                       seed: int = 0) -> list[Problem]:
    """Bank problems (of the bank `n`, `seed`), each asked in one of the training `styles`, picked by
    a hash of its id: the same problems and count, the wording varied. The held-out style is refused."""
    from conductor.data.synthetic.styles import HELDOUT_STYLE, style

    if HELDOUT_STYLE in styles:
        raise ValueError(f"{HELDOUT_STYLE!r} is the held-out style: nothing trains on it")
    for name in styles:
        style(name)
    by_style = {name: {p.id: p for part in cached_bank_split(n, seed, name) for p in part}
                for name in styles}
    out: list[Problem] = []
    for p in problems:
        name = styles[int(hashlib.sha256(f"phrasing:{p.id}".encode()).hexdigest()[:8], 16) % len(styles)]
        out.append(by_style[name].get(p.id, p))
    return out


def bank_splits(*, n: int = 2400, seed: int = 0, validation: int = 48, split_seed: int = 0) -> ProblemSplits:
    """The bank's train split minus `validation` problems (stratified by domain) for early
    stopping; its held-out split as the test set. The same arguments always give the same sets."""
    train, heldout = cached_bank_split(n, seed)
    fraction = validation / max(1, len(train))
    rest, val = split_problems(train, fraction, seed=split_seed)
    return ProblemSplits(train=rest, validation=val, test=list(heldout))


def take_per_domain(problems: Sequence[Problem], n: int, *, seed: int = 0) -> list[Problem]:
    """About `n` problems, as many per domain as the domains allow, chosen by a seeded hash
    (small fixtures, SFT subsets, fixed-size test sets)."""
    if n >= len(problems):
        return list(problems)
    by_domain: dict[str, list[Problem]] = {}
    for p in sorted(problems, key=lambda p: hashlib.sha256(f"{seed}:{p.id}".encode()).hexdigest()):
        by_domain.setdefault(p.domain, []).append(p)
    out: list[Problem] = []
    k = 0
    while len(out) < n:
        for group in by_domain.values():
            if k < len(group) and len(out) < n:
                out.append(group[k])
        k += 1
    return out


def local_problems(role: str = "train") -> list[Problem]:
    """The shipped sample rows of the train (or eval) sources; rows a loader rejects are skipped
    (the samples include a deliberately malformed one)."""
    sources = TRAIN_SOURCES if role == "train" else EVAL_SOURCES
    return [p for spec in sources for p in load_source(spec.name, on_error="skip").problems]


def split_problems(problems: Sequence[Problem], held_out: float, *, seed: int = 0) -> tuple[list[Problem], list[Problem]]:
    """(train, held-out), by a seeded hash of each problem id, stratified per domain so every
    domain has held-out rows; the same problems and seed always give the same split."""
    train: list[Problem] = []
    test: list[Problem] = []
    by_domain: dict[str, list[Problem]] = {}
    for p in problems:
        by_domain.setdefault(p.domain, []).append(p)
    for group in by_domain.values():
        ranked = sorted(group, key=lambda p: hashlib.sha256(f"{seed}:{p.id}".encode()).hexdigest())
        n_test = round(len(ranked) * held_out)
        if held_out > 0 and len(ranked) > 1:
            n_test = max(1, n_test)
        test += ranked[:n_test]
        train += ranked[n_test:]
    return train, test
