"""`execute_python`: sandboxed code with Finnhub-shaped market data and Exa-shaped search."""
