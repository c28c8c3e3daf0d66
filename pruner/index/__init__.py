"""Data-skipping indexes: definitions, statistics and bloom filters."""
