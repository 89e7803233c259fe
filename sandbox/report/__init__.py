"""What a person reads: the rollover matrix, failure reports, summaries. Pure."""
