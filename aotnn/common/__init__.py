"""Tensor, Parameter, dtypes, initializers and seeds."""
