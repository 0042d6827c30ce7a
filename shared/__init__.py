"""The library every replication builds on, in wings by role:

nn/        layers and their weight analyses (a paper's subject lives here)
data/      the dataset registry, verified downloads, prepared files, generated datasets
train/     training loops, schedules, optimizers, stacked training
pipeline/  the workflow's side: papers, config, claims, reports, provenance, the run contract, shared rules
io/        atomic files, safetensors checkpoints, devices and seeding

Dependencies point down: pipeline -> train -> nn -> io, data -> io; no wing imports pipeline except pipeline.
"""
