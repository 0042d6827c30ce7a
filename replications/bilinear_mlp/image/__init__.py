"""The image part (Pearce et al. section 4, Apps A-F, M): bilinear MNIST / Fashion-MNIST classifiers (model.py at
the paper's root), trained per experiment (train.py), and the analyses of their eigendecompositions:
accuracy, spectra, noise, grid, truncation, similarity, adversarial masks, HOSVD and section 4.3's target task."""
