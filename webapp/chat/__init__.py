"""Chat sessions and turns: persistence, the background runner, and the tools per user."""
