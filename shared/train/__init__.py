"""Training: many models in one run (supervised), sequences, language models, stacked (vmap), SAEs, Muon, schedules."""
