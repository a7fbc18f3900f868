"""Helpers of the training script; the backward pass scales the loss only in half precision."""

import apex.amp as amp


def backward(loss, opt, half_prec):
    if half_prec:
        with amp.scale_loss(loss, opt) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
