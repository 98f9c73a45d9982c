"""The keys: signed resume tokens, the signing keyring, session keys and API keys."""
