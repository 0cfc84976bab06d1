"""The database layer: SQL that differs between PostgreSQL and SQLite, and bulk writes, behind
functions the domain modules call without asking which database runs."""
