"""Whether apex imports (the task and the train step import it only then)."""


def is_apex_available():
    try:
        import apex  # noqa: F401

        apex_available = True
    except ImportError:
        apex_available = False
    return apex_available
