"""The turn: the model and the tools in rounds; citable content; targets on every channel."""
