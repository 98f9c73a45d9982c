"""Wiring signoff to AWS: the composition root of the Lambda functions."""
