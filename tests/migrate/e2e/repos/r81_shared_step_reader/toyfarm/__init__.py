"""A toy library in FARM's shape: one module builds the optimizer and sets apex up, the
trainer of another module scales the loss when its own flag says so and steps on a shared
line at each accumulation boundary."""
