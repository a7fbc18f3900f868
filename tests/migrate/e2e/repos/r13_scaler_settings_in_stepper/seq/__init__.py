"""A sequence-model-style training package (the shape of DLE-GNMT's seq2seq/train)."""
