"""GRPO training of the Conductor over TRL: prompt rows, the async batch reward, randomized
pools, recursion rounds, the SFT warm start and the typed config. Imports no mlflow/prefect:
registry/ and flows/ sit above it."""
