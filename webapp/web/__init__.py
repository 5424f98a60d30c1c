"""The web layer: blueprints that parse a request, call the core or a store, and render."""
