"""Reports: the benchmark's and the soak's Markdown pages and their plots."""
