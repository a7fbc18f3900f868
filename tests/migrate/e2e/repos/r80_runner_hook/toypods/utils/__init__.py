from .apex_wrapper import float_function, is_amp_training
