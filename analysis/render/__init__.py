"""Rendering: words, figures and templates for the results the experiments compute."""
