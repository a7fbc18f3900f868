"""Forward helpers shared by training and evaluation: each is handed the model and runs it."""


def forward_chunk(model, x):
    return {"pred": model(x)}
