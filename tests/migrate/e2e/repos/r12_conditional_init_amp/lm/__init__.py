"""A language-model-style trainer package (the shape of XLM's trainer)."""
