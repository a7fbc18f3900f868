"""End to end: apex loss-scaler settings (``amp._amp_state.loss_scalers[0]._loss_scale = x``,
``._scale_seq_len = n``) migrated --to native train like the original through apexcompat.amp.

Two shapes: the settings right after ``amp.initialize`` through a local alias (folded into the
GradScaler's constructor) and the settings in a method called half way through training (public
updates of the GradScaler where they stand).  Each script logs the loss scale after every step
and overflows on purpose at two steps, so the trajectory shows the initial scale, the halving,
the growth interval and a scale set mid-run; native and original must log the same scales.
A third script keeps one loss scaler per loss id (``num_losses=2``) and logs the scale of each
(``loss_scalers[i].loss_scale()`` / ``._loss_scale``): natively each loss id's GradScaler; so
do its variants that keep a loss scaler in a local and read it later, and that go over all of
them in a comprehension (natively over the list of GradScalers).
"""

from __future__ import annotations

from test_rules_amp_e2e import migrated, run_script

COMMON = '''\
import torch
import torch.nn.functional as F
from apex import amp


def batches(device, steps):
    gen = torch.Generator().manual_seed(0)
    w = torch.randn(8, 2, generator=gen)
    for step in range(steps):
        x = torch.randn(16, 8, generator=gen)
        yield step, x.to(device), (x @ w).to(device)

'''

AFTER_INITIALIZE = COMMON + '''
def main(argv):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1", verbosity=0)
    tuned = amp._amp_state.loss_scalers[0]
    tuned._loss_scale = 1024.0
    tuned._scale_seq_len = 3
    scales, losses = [], []
    for step, x, y in batches(device, 16):
        loss = F.mse_loss(model(x), y)
        if step in (2, 9):
            loss = loss * float("inf")
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        scales.append(amp._amp_state.loss_scalers[0].loss_scale())
        losses.append(loss.item())
    return {"scales": scales, "losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
'''

IN_A_METHOD = COMMON + '''
class Trainer:
    def __init__(self, model, optimizer, device):
        self.device = device
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1", verbosity=0)

    def retune(self, scale, window):
        loss_scaler = amp._amp_state.loss_scalers[0]
        loss_scaler._loss_scale = scale
        loss_scaler._scale_seq_len = window

    def train_step(self, x, y, poison):
        x, y = x.to(self.device), y.to(self.device)
        loss = F.mse_loss(self.model(x), y)
        if poison:
            loss = loss * float("inf")
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
        return loss.item(), amp._amp_state.loss_scalers[0].loss_scale()


def main(argv):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 2).to(device)
    trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.05), device)
    scales, losses = [], []
    for step, x, y in batches(device, 16):
        if step == 6:
            trainer.retune(512.0, 2)
        loss, scale = trainer.train_step(x, y, poison=step in (3, 10))
        scales.append(scale)
        losses.append(loss)
    return {"scales": scales, "losses": losses, "params": [p.detach().clone() for p in trainer.model.parameters()]}
'''


def _compare(source: str, name: str, expected_codes: str, scales: list) -> None:
    native = migrated(source, "native")
    assert "_amp_state" not in native and "apex" not in native, native
    assert expected_codes in native
    original = run_script(migrated(source, "shim"), [], name + "_shim")
    result = run_script(native, [], name + "_native")
    assert original["scales"] == scales, original["scales"]  # what apex's scaler does with the settings
    assert result["scales"] == original["scales"], (result["scales"], original["scales"])
    for a, b in zip(result["params"], original["params"]):
        assert (a - b).abs().max() <= 1e-3 * (1 + b.abs().max()), (a, b)


def test_settings_right_after_initialize_become_constructor_arguments() -> None:
    # 1024 for two clean steps, overflow at 2 (skip, 512), growth every 3 clean steps
    expected = [1024.0, 1024.0, 512.0, 512.0, 512.0, 1024.0, 1024.0, 1024.0, 2048.0, 1024.0]
    expected += [1024.0, 1024.0, 2048.0, 2048.0, 2048.0, 4096.0]
    _compare(AFTER_INITIALIZE, "after_initialize", "init_scale=1024.0, growth_interval=3", expected)


def test_settings_in_a_method_update_the_scaler_mid_run() -> None:
    # the default 65536 overflows float16 on its own at first; at step 6 the scale is set to 512
    # with a window of 2, but the count of clean steps goes on from 3 and growth needs it to hit
    # the window exactly, so the scale grows only after the overflow at 10 restarts the count
    expected = [32768.0, 32768.0, 16384.0, 8192.0, 8192.0, 8192.0]
    expected += [512.0, 512.0, 512.0, 512.0, 256.0, 256.0, 512.0, 512.0, 1024.0, 1024.0]
    _compare(IN_A_METHOD, "in_a_method", "set_growth_interval(window)", expected)


PER_LOSS_ID = COMMON + '''
def main(argv):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    first, second = torch.nn.Linear(8, 2).to(device), torch.nn.Linear(8, 2).to(device)
    opt_first = torch.optim.SGD(first.parameters(), lr=0.05)
    opt_second = torch.optim.SGD(second.parameters(), lr=0.05)
    [first, second], [opt_first, opt_second] = amp.initialize(
        [first, second], [opt_first, opt_second], opt_level="O1", num_losses=2, verbosity=0
    )
    scales, losses = [], []
    for step, x, y in batches(device, 8):
        loss_first = F.mse_loss(first(x), y) * (float("inf") if step in (1, 2) else 1.0)
        opt_first.zero_grad()
        with amp.scale_loss(loss_first, opt_first, loss_id=0) as scaled_loss:
            scaled_loss.backward()
        opt_first.step()
        loss_second = F.mse_loss(second(x), y) * (float("inf") if step == 5 else 1.0)
        opt_second.zero_grad()
        with amp.scale_loss(loss_second, opt_second, loss_id=1) as scaled_loss:
            scaled_loss.backward()
        opt_second.step()
        scales.append((amp._amp_state.loss_scalers[0].loss_scale(), amp._amp_state.loss_scalers[1]._loss_scale))
        losses.append(loss_first.item() + loss_second.item())
    params = [p.detach().clone() for m in (first, second) for p in m.parameters()]
    return {"scales": scales, "losses": losses, "params": params}
'''


def test_the_scale_of_each_loss_id_is_its_own_grad_scalers() -> None:
    # apex keeps one scaler per loss id: both start at 65536, which float16 overflows on its own
    # at step 0 (the second loss again at step 2); the forced overflows of loss 0 (steps 1, 2)
    # halve only its scale, the one of loss 1 (step 5) only the other's
    expected = [(32768.0, 32768.0), (16384.0, 32768.0)] + [(8192.0, 16384.0)] * 3 + [(8192.0, 8192.0)] * 3
    _compare(PER_LOSS_ID, "per_loss_id", "scalers[1].get_scale()", expected)


def test_a_setting_of_one_loss_scaler_updates_that_loss_ids_grad_scaler() -> None:
    # apex: scaler 1 starts at 1024, scaler 0 grows after 2 clean steps; each setting reaches
    # only its own loss id's scaler (before: one GradScaler for both losses, both at 1024)
    source = PER_LOSS_ID.replace(
        '        [first, second], [opt_first, opt_second], opt_level="O1", num_losses=2, verbosity=0\n    )\n',
        '        [first, second], [opt_first, opt_second], opt_level="O1", num_losses=2, verbosity=0\n    )\n'
        "    amp._amp_state.loss_scalers[1]._loss_scale = 1024.0\n"
        "    amp._amp_state.loss_scalers[0]._scale_seq_len = 2\n",
    )
    assert source != PER_LOSS_ID
    expected = [(32768.0, 1024.0), (16384.0, 1024.0), (8192.0, 1024.0), (8192.0, 1024.0), (16384.0, 1024.0)]
    expected += [(16384.0, 512.0), (32768.0, 512.0), (32768.0, 512.0)]
    _compare(source, "per_loss_id_settings", "scalers[1].load_state_dict(", expected)


#: the per-loss-id scales read through a local kept from the start, in a comprehension, and
#: by a loss id that is a loop variable
PER_LOSS_ID_INDIRECT_READS = (
    PER_LOSS_ID.replace(
        "    scales, losses = [], []\n",
        "    first_scaler = amp._amp_state.loss_scalers[0]\n    scales, losses = [], []\n",
    )
    .replace(
        "        scales.append((amp._amp_state.loss_scalers[0].loss_scale(), amp._amp_state.loss_scalers[1]._loss_scale))\n",
        "        both = tuple(s._loss_scale for s in amp._amp_state.loss_scalers)\n"
        "        scales.append((first_scaler.loss_scale(), both[1]))\n"
        "        assert both[0] == first_scaler.loss_scale()\n"
        "        for k in range(2):\n"
        "            assert amp._amp_state.loss_scalers[k].loss_scale() == both[k]\n",
    )
)


def test_loss_scalers_read_through_a_local_and_a_comprehension_are_the_grad_scalers() -> None:
    # the same trajectories as read in place (before: the file kept apex.amp for these reads)
    assert "first_scaler.loss_scale()" in PER_LOSS_ID_INDIRECT_READS
    assert "in amp._amp_state.loss_scalers)" in PER_LOSS_ID_INDIRECT_READS
    assert "loss_scalers[k]" in PER_LOSS_ID_INDIRECT_READS
    expected = [(32768.0, 32768.0), (16384.0, 32768.0)] + [(8192.0, 16384.0)] * 3 + [(8192.0, 8192.0)] * 3
    _compare(PER_LOSS_ID_INDIRECT_READS, "per_loss_id_indirect", "scalers[k].get_scale() == both[k]", expected)
