"""The approver's side of a pause: who decided, the card they read, the display-safe text
they see, and what of a tool call they may change."""
