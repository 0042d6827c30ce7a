"""The theory part (Sharkey 2023; Pearce et al. sections 2-3, App L, the authors' tutorial 0): the algebra of a
bilinear layer checked exactly, as identities on a trained image classifier's weights (analyze_identities.py) and
on the toy Boolean task, whose tiny models train inside their own analysis job (toy_boolean.py)."""
