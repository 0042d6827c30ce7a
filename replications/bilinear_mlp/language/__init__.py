"""The language part (Pearce et al. section 5, Apps H, I): a small transformer per MLP kind (train_lm.py), TopK SAEs
on one layer's MLP input and output (train_sae.py), and the weight-based analyses of the output features: low rank,
the negation feature, the SAE-length sweep, and the losses of bilinear, ReGLU and SwiGLU MLPs.
Steps: pipeline.steps."""
