"""The Conductor model as MLflow's models-from-code logs it: `log_and_register` passes this file's
path, MLflow copies it into the model and runs it when the model is loaded, and `set_model` names
the PythonModel. Logging a path rather than a pickled object is what MLflow asks for (a pickled
object runs arbitrary code when it is loaded, and MLflow warned about it at every logging)."""

from mlflow.models import set_model

from registry.models import ConductorModel

set_model(ConductorModel())
