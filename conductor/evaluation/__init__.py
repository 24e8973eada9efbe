"""Evaluation: the paper's baselines as Methods, statistics, the results table and plots.
Plain data in and out: the warehouse computes accuracy and cost from stored calls."""
