"""Packets and the processed-message state (docs/specs.md, rules P1-P22), in pure Python.

The server folds each answer's packets into a `ProcessedMessageState` to render the page;
API clients can use the same module. Pure: no web framework, database or network imports.
"""
