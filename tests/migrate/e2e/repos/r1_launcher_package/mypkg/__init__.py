"""A toy detection-style package: data, modeling, engine."""
