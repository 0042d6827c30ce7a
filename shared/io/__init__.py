"""Files written atomically, safetensors checkpoints (never pickle), devices and seeding."""
