"""Notification channels: one port, one adapter per service (webhook, Slack, Lark, email, …)."""
