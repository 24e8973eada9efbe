"""A generated problem bank for offline learning: seeded, deterministic problems in the Problem
schema over the four domains, with gold answers, plausible wrong answers (`meta["distractors"]`;
for code `meta["wrong_solutions"]`) and a stable train/held-out split. See docs/data.md."""

from conductor.data.synthetic.generate import (
    DEFAULT_N,
    DEFAULT_SEED,
    HELDOUT_PERCENT,
    cached_bank_split,
    generate_bank,
    generate_domain,
    source_name,
    split_bank,
    split_of,
)

__all__ = ["DEFAULT_N", "DEFAULT_SEED", "HELDOUT_PERCENT", "cached_bank_split", "generate_bank", "generate_domain",
           "source_name", "split_bank", "split_of"]
