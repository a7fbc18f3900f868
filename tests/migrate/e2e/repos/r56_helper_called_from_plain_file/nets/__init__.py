"""A regressor, the factory that sets it up for training, and the steps that train it."""
