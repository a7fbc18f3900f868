"""A static apex loss scale (``amp.initialize(..., loss_scale=128.0)``, or a number read at
run time) kept constant by the GradScaler that replaces it.

apex's static scaler never checks for overflow and never changes its scale (spec §5.4, §6.3):
an inf/nan gradient reaches ``optimizer.step()`` and the scale stays.  GradScaler has no
static mode: a ``growth_interval`` no run reaches keeps it from growing, but ``update()``
still multiplies the scale by ``backoff_factor`` after a step it skipped.  Its constructor
refuses a ``backoff_factor`` of 1, so ``set_backoff_factor(1.0)`` follows it: after a skipped
step the scale stays where apex kept it.  That matters beyond the number: a loss whose
backward ignores the incoming gradient (warp-ctc's, the reason deepspeech.pytorch scales by
1) is unscaled by a halved scale into gradients twice as large, from then on.  The skipped
step itself has no GradScaler equivalent (apex applied the inf/nan gradients, which leaves
the weights inf/nan); the APX204 warning says so.
"""

from __future__ import annotations

from ._edits import NO_GROWTH

#: the backoff factor of a GradScaler that stands for a static loss scale
STATIC_BACKOFF = "1.0"
#: GradScaler's own default, kept where the scale read at run time is dynamic
DYNAMIC_BACKOFF = "0.5"
#: what the GradScaler still does otherwise than apex's static scaler (APX204's words)
SKIPS_ON_OVERFLOW = "skips a step whose grads hold inf/nan, which apex took"


def run_time_backoff(growth: str) -> str:
    """The backoff factor for a scale chosen at run time: the growth interval local
    ``growth`` is ``NO_GROWTH`` exactly when the value was a number (static)."""
    return f"{STATIC_BACKOFF} if {growth} == {NO_GROWTH} else {DYNAMIC_BACKOFF}"


def static_backoff_line(target: str, backoff: str, several: bool) -> str:
    """``scaler.set_backoff_factor(<backoff>)`` for the GradScaler ``target`` (each of the
    list of them when ``several``: one per loss id)."""
    if several:
        return f"for loss_id_scaler in {target}:\n    loss_id_scaler.set_backoff_factor({backoff})\n"
    return f"{target}.set_backoff_factor({backoff})\n"
