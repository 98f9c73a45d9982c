"""Durable turns: a turn checkpointed in the store, paused for a decision and resumed."""
