"""Revisiting Bi-Linear State Transitions in Recurrent Neural Networks (Ebrahimi & Memisevic, NeurIPS 2025)."""
