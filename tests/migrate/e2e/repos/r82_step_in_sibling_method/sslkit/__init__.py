"""A small trainer package: an engine that owns the model and its precision, and a stepper."""
