"""The reader network, its data, and the setup helper every script builds it through."""
