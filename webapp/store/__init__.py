"""Storage: users, sessions, API tokens, sign-in throttling, the financial data model, and
schema migrations.

SQLAlchemy Core (no ORM) over SQLite (the default) or PostgreSQL (psycopg 3). The model's
SQL never runs here; it goes through `webapp.tools.sql.run_sql`, which reads only the
views in `QUERY_VIEWS`, only for one user.
"""
