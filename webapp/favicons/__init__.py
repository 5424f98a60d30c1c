"""Favicons for web sources: fetched by the server (never by the browser), public hosts only,
size- and time-bounded, cached."""
