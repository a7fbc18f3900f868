"""Sets apex.amp up for a GAN: the model and its two optimizers, one loss scaler per loss id
(as many as init_args' num_losses)."""
try:
    from apex import amp
except ImportError:
    amp = None


def apex_amp_initialize(models, optimizers, init_args=None, mode="gan"):
    """Initialize apex.amp for ``models`` and the generator's and discriminator's optimizers;
    returns the models and the optimizer dict."""
    init_args = init_args or dict()

    if mode == "gan":
        _optimizers = [optimizers["generator"], optimizers["discriminator"]]

        models, _optimizers = amp.initialize(models, _optimizers, **init_args)
        optimizers["generator"] = _optimizers[0]
        optimizers["discriminator"] = _optimizers[1]

        return models, optimizers

    else:
        raise NotImplementedError(f"Cannot initialize apex.amp with mode {mode}")
