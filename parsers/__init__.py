"""Readers and writers of Spades hand logs, the shared hand-record model, and the DuckDB loader."""
