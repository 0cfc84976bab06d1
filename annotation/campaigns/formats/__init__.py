"""The upload forms a campaign's data comes in: plain text files, one table (TSV or JSONL), WMT
XML."""
