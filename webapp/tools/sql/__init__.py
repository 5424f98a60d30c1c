"""The `execute_sql` query service: the model's SQL, read-only, over one user's views only."""
