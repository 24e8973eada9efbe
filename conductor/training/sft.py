"""The SFT warm start (TRL `SFTTrainer`): teach a base model the workflow format on generated
workflows before GRPO, so GRPO starts from parseable outputs (reward 0.5) instead of zeros."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from conductor.models.tiny import load_tokenizer


def warm_start(
    model_dir: str | Path,
    out_dir: str | Path,
    examples: Sequence[dict],
    *,
    epochs: float = 3.0,
    learning_rate: float = 3e-3,
    batch_size: int = 16,
    seed: int = 0,
    use_cpu: bool = True,
    on_log: Callable[[dict[str, Any]], None] | None = None,
    peft_config: Any = None,
    max_length: int = 1024,
    logging_steps: int = 10,
    lr_scheduler_type: str = "cosine",
) -> Path:
    """Fine-tune `model_dir` on prompt/completion `examples` (loss on the completion only);
    save model and tokenizer to `out_dir` and return it. Every `logging_steps` the trainer's
    figures (loss, learning rate, token accuracy) go to `on_log` when given, else are printed.
    With a peft `peft_config` (LoRA) only the adapters train, and they are merged into the saved
    weights: `out_dir` is a plain model directory either way."""
    from datasets import Dataset
    from conductor.models.constrained import load_causal_lm
    from trl import SFTConfig, SFTTrainer

    from conductor.training.callbacks import send_logs_to

    out_dir = Path(out_dir)
    tokenizer = load_tokenizer(model_dir)
    model = load_causal_lm(model_dir)
    args = SFTConfig(
        output_dir=str(out_dir / "_sft_run"),
        num_train_epochs=epochs,
        learning_rate=learning_rate,
        lr_scheduler_type=lr_scheduler_type,
        warmup_steps=0.05 if lr_scheduler_type == "cosine" else 0,  # a float < 1 is a fraction of the steps
        per_device_train_batch_size=batch_size,
        completion_only_loss=True,
        max_length=max_length,
        save_strategy="no",
        report_to="none",
        logging_steps=logging_steps,
        seed=seed,
        use_cpu=use_cpu,
        # TRL's SFTConfig turns bf16 on by default; on a CPU without bf16 units (this project's
        # 2-core machines) autocast made SFT ~5x slower (10 steps of 16: 33 s against 6 s).
        bf16=not use_cpu,
        activation_checkpointing=False,
        disable_tqdm=True,
    )
    trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(list(examples)), processing_class=tokenizer,
                         peft_config=peft_config)
    send_logs_to(trainer, on_log)
    trainer.train()
    save_merged(trainer, out_dir)
    tokenizer.save_pretrained(out_dir)
    # accelerate keeps one process-wide state; GRPO after the warm start in the same process
    # (`conductor train` from a fresh home) must be free to set its own mixed precision, else
    # "AcceleratorState has already been initialized and cannot be changed".
    from accelerate.state import AcceleratorState

    AcceleratorState._reset_state()  # the PartialState (process topology) stays: configs hold it
    return out_dir


def save_merged(trainer: Any, out_dir: str | Path) -> Any:
    """Save the trained model to `out_dir` as a plain model directory and return the model saved:
    a peft model's LoRA adapters are merged into its weights first (`save_model` would write the
    adapters alone, which only peft and the base weights' path can load). Rank 0 writes."""
    from accelerate.utils import is_peft_model

    if not is_peft_model(trainer.model):
        trainer.save_model(str(out_dir))
        return trainer.model
    merged = trainer.model.merge_and_unload()
    if trainer.is_world_process_zero():
        merged.save_pretrained(str(out_dir))
    return merged
