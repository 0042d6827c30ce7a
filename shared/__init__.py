"""The layer library shared by every replication: layers, weight analysis, training, data, claims and reports."""
