"""Approvals over time: the inbox of open items, replaying rules over past ones, and
the escalation ladder."""
