"""The deterministic offline engine: plans tool calls from the question, then writes the
answer from the tool results, citing each figure."""
