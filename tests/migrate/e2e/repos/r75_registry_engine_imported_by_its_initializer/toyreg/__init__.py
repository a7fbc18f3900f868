"""A toy library in the shape of frameworks whose set-up module registers the engines and
initializes apex, while the engine the configuration names scales the losses."""
