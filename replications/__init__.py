"""One package per replicated paper (replications/<paper>/); see README.md, "Adding a paper"."""
