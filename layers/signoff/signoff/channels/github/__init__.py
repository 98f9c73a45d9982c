"""GitHub: the channel that comments on issues and pull requests, its App auth and markdown."""
