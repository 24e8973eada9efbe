"""MLflow, the only code that imports it: training runs (params, per-step metrics, curves,
sample workflows), logged Conductor models, the registered model `conductor` and its aliases,
and resolving `models:/conductor@ALIAS` to a local model directory for the library.

The store is `sqlite:///$CONDUCTOR_HOME/mlflow.db` by default, or `MLFLOW_TRACKING_URI`."""
