"""The language models: Claude over HTTP, and the deterministic offline model."""
