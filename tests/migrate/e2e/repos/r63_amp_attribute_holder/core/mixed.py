"""Mixed precision for a Learner: apex's initialize on its network and optimizer, and apex.amp
kept on the learner, whose train_step scales through it."""


def enable_amp(learner, device, opt_level="O1", loss_scale="dynamic"):
    from apex import amp

    learner.net, learner.optimizer = amp.initialize(
        learner.net, learner.optimizer, opt_level=opt_level, loss_scale=loss_scale, verbosity=0
    )
    learner.amp = amp
