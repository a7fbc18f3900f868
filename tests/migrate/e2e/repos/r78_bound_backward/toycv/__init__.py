"""A small training package: a launcher class without apex and the backward functions a
launcher script may bind onto it."""
