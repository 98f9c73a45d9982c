"""The approval-only stores: a PostgreSQL table, any DB-API 2.0 driver, a Redis list."""
