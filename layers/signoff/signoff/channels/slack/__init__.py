"""Slack: the channel that posts approval cards, and the interactions its buttons send back."""
