"""Workers: one protocol, one adapter per provider, a pool built from a YAML file."""

from conductor.types import Message, Prices, WorkerSpec

from conductor.workers.base import Completion, Worker, WorkerError
from conductor.workers.pool import Pool, PoolError, PoolFile, read_pool_file
from conductor.workers.registry import BuildContext, register_provider

__all__ = [
    "BuildContext",
    "Completion",
    "Message",
    "Pool",
    "PoolError",
    "PoolFile",
    "Prices",
    "Usage",
    "Worker",
    "WorkerError",
    "WorkerSpec",
    "read_pool_file",
    "register_provider",
]
