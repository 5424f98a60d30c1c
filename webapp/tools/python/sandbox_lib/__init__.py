"""Modules the sandboxed code can import: `finnhub`, `exa` and `exa_py`.

This folder is put at the front of the child's `sys.path`, so each module here is a
top-level module there; they reach the parent through `_sandbox_rpc`.
"""
