"""tcfuzz host side: program generation, campaigns, buckets, minimisation, corpus, reports and the CLI."""
