"""Citation targets: what each chat citation points at (docs/specs.md#citation-targets).

Pure: this package imports no web framework, database driver or network client.
"""
