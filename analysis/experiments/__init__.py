"""Experiments: each computes a result (tidy polars frames and a verdict object) that
analysis.api returns and analysis.render turns into a report."""
