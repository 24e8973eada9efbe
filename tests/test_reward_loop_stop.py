"""A stop during the reward leaves nothing pending on TRL's event loop.

TRL runs async reward functions on a daemon thread's loop and blocks on the result; a Ctrl-C
there used to leave the scoring task pending, and at exit asyncio printed "Task was destroyed
but it is pending!" below `conductor train`'s one-line stop message (seen in CI). The child
process below is that situation with TRL's own loop: a reward that is still awaiting when the
main thread is interrupted."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CHILD = textwrap.dedent("""
    import asyncio, atexit, sys, types
    from trl.trainer.utils import start_event_loop_in_daemon, shutdown_event_loop_in_daemon
    from conductor.training.grpo import cancel_pending_rewards

    unwound = []


    def step():
        thread, loop, ready = start_event_loop_in_daemon(name="rewards")
        ready.wait()
        atexit.register(shutdown_event_loop_in_daemon, thread, loop)  # as GRPOTrainer does
        trainer = types.SimpleNamespace(async_loop=loop)

        async def call_worker():
            try:
                await asyncio.sleep(3600)  # a worker call still out
            finally:
                unwound.append(True)

        async def rewards():  # as TRL's _run_async_funcs: the reward functions under asyncio.gather
            return await asyncio.gather(call_worker())

        future = asyncio.run_coroutine_threadsafe(rewards(), loop)
        try:
            future.result(timeout=0.5)  # stands for the Ctrl-C that interrupts TRL's .result()
        except TimeoutError:
            if sys.argv[1] == "cancel":
                cancel_pending_rewards(trainer)


    step()
    print("unwound" if unwound else "pending")
""")


def run_child(mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True, timeout=120)


def test_a_stop_mid_reward_unwinds_the_reward_and_exits_without_asyncio_noise() -> None:
    done = run_child("cancel")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "unwound"
    assert "Task was destroyed" not in done.stderr, done.stderr


def test_without_the_cleanup_asyncio_reports_the_pending_task() -> None:
    """The situation is real: left alone, the task is still pending and asyncio says so at exit."""
    done = run_child("leave")
    assert done.stdout.strip() == "pending"
    assert "Task was destroyed but it is pending" in done.stderr, done.stderr
