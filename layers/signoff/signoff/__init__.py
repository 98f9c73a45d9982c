"""signoff: agent turns that pause, durably, for a human sign-off."""
