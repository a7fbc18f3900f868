"""The library's iteration runner, with apex's loss-scaler state in its checkpoints."""

import os

from mmcv.runner import RUNNERS, IterBasedRunner

from .checkpoint import save_checkpoint

try:
    import apex
except ImportError:
    print("apex is not installed")


@RUNNERS.register_module()
class IterBasedRunnerAmp(IterBasedRunner):
    def save_checkpoint(self, out_dir, filename_tmpl="iter_{}.pth"):
        path = os.path.join(out_dir, filename_tmpl.format(self.iter))
        save_checkpoint(self.model, path, optimizer=self.optimizer, meta=dict(iter=self.iter))

    def resume(self, path):
        checkpoint = self.load_checkpoint(path)
        self.optimizer.load_state_dict(checkpoint["optimizer"])
        self._iter = checkpoint["meta"]["iter"]
        if "amp" in checkpoint:
            apex.amp.load_state_dict(checkpoint["amp"])
