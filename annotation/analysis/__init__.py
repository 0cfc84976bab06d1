"""The human-judgment analysis: its tables from the database, the analysis page, decisions and
API."""
