"""Notifications: what a person is told about a pending item or a finished run."""
