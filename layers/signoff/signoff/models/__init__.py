"""Model adapters behind the ``ModelCall`` port."""
