"""Sets apex.amp up for a GAN: the model and its two optimizers, one loss scaler per loss id
(as many as init_args' num_losses)."""
import torch

# one GradScaler per loss id, set where amp.initialize was: they replaced apex.amp's per-process loss scalers
grad_scalers = None


def apex_amp_initialize(models, optimizers, init_args=None, mode="gan"):
    """Initialize apex.amp for ``models`` and the generator's and discriminator's optimizers;
    returns the models and the optimizer dict."""
    global grad_scalers
    init_args = init_args or dict()

    if mode == "gan":
        _optimizers = [optimizers["generator"], optimizers["discriminator"]]

        amp_options = dict(init_args)
        amp_loss_scale = amp_options.get("loss_scale", "dynamic")
        amp_scale, amp_growth = (
            (min(65536.0, amp_options.get("max_loss_scale", 2.0**24)), 2000)
            if amp_loss_scale == "dynamic"
            else (float(amp_loss_scale), 10**9)
        )
        use_amp = bool(amp_options.get("enabled", True)) and amp_options.get("opt_level", "O1") != "O0"
        grad_scalers = [torch.amp.GradScaler(next(models.parameters()).device.type, init_scale=amp_scale, growth_interval=amp_growth, enabled=use_amp) for _ in range(amp_options.get("num_losses", 1))]
        for amp_scaler in grad_scalers:
            amp_scaler.set_backoff_factor(1.0 if amp_growth == 10**9 else 0.5)
        optimizers["generator"] = _optimizers[0]
        optimizers["discriminator"] = _optimizers[1]

        return models, optimizers

    else:
        raise NotImplementedError(f"Cannot initialize apex.amp with mode {mode}")
