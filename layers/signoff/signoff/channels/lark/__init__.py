"""Lark: the channel that posts approval cards, and the callbacks its buttons send back."""
