"""A self-supervised trainer package: a task, its hooks and the train steps built by name."""
