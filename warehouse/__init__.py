"""The warehouse: DuckDB schema + migrations, the TraceStore (the one writer), views, staging."""

from warehouse.migrations import LATEST as SCHEMA_VERSION
from warehouse.migrations import SchemaError
from warehouse.records import CostRow, DatasetManifest, Promotion, Run
from warehouse.rows import Batch, TraceRowError, flatten
from warehouse.staging import ingest_staged, stage_batch, stage_traces
from warehouse.store import TraceStore, WriteResult

__all__ = [
    "SCHEMA_VERSION", "Batch", "CostRow", "DatasetManifest", "Promotion", "Run",
    "SchemaError", "TraceRowError", "TraceStore", "WriteResult", "flatten", "ingest_staged",
    "stage_batch", "stage_traces",
]
