"""Run by tests/test_drill_secrets.py in a subprocess whose environment holds sentinel provider
keys: the smallest training run the training tests use (the Prefect training flow: warm-started
tiny Conductor, GRPO, logged to MLflow and registered as conductor@challenger), then an
evaluation flow over the loopback providers that receive those keys. Both under Prefect (a
temporary Prefect server in this process's PREFECT_HOME).

    python tests/drill_secrets_pipeline.py WORKDIR POOL_FILE PROBLEMS_FILE
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(work: Path, pool: Path, problems: Path) -> None:
    from conductor.evaluation.config import EvalConfig
    from conductor.training.config import local_profile
    from conductor.training.problems import bank_splits, take_per_domain
    from conductor.training.warm import warm_started_tiny
    from flows.evaluation import evaluation_flow
    from flows.training import training_flow

    train = take_per_domain(bank_splits().train, 8)
    model = warm_started_tiny(local_profile(work / "warm", sft_epochs=1.0, sft_problems=8), train, copies=1,
                              hidden_size=32, num_hidden_layers=1)
    overrides = {"model_name_or_path": str(model), "max_steps": 1, "per_device_train_batch_size": 2,
                 "num_generations": 2, "max_completion_length": 16, "eval_every": 0, "early_stopping_patience": 0}
    registered = training_flow(output_dir=str(work / "run"), chunk_steps=1, overrides=overrides)
    result = evaluation_flow(EvalConfig(methods=["single:w-openai", "single:w-anthropic", "single:w-google"],
                                        problems_file=problems, pool_file=pool, out_dir=work / "eval"))
    print("DRILL-RESULT " + json.dumps({"registered": registered, "evaluation_id": result.evaluation_id}))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
