"""Who Said Neural Networks Aren't Linear? (the Linearizer; Berman, Hallak, Shocher, arXiv 2510.08570)."""
