"""The HTTP API: Powertools routers, request and response models, the error table."""
