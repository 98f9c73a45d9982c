"""The built-in channel types' settings models, one module a type.

``CHANNEL_TYPES`` names each model by import path, and validating ``channels.yaml``
imports only the models of the types it uses. A module here imports pydantic and
``channels.config`` and no client library: every function validates its channels
at cold start, and only the notifier builds them.
"""
