"""Networks and their placement for the two trainers."""
