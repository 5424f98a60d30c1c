"""Citation targets: what each chat citation points at (seed 000, the server side).

Pure: this package imports no web framework, database driver or network client.
"""
