"""The adversarial term: it trains the discriminator through the optimizer holder
(self.optimizer.D), then returns the generator's adversarial loss."""

import torch
import torch.nn as nn

try:
    from apex import amp
except ImportError:
    pass


class Adversarial(nn.modules.loss._Loss):
    def __init__(self, args, model, optimizer):
        super(Adversarial, self).__init__()
        self.args = args
        self.model = model.model
        self.optimizer = optimizer
        self.bce = nn.BCEWithLogitsLoss()

    def forward(self, fake, real, training=False):
        if training:
            fake_detach = fake.detach().to(self.args.device)
            self.optimizer.D.zero_grad()
            d_fake = self.model.D(fake_detach)
            d_real = self.model.D(real)

            label_fake = torch.zeros_like(d_fake)
            label_real = torch.ones_like(d_real)

            loss_d = self.bce(d_fake, label_fake) + self.bce(d_real, label_real)
            if self.args.amp:
                with amp.scale_loss(loss_d, self.optimizer.D) as scaled_loss_d:
                    scaled_loss_d.backward()
            else:
                loss_d.backward()

            self.optimizer.D.step()
        else:
            d_real = self.model.D(real)
            label_real = torch.ones_like(d_real)

        d_fake_bp = self.model.D(fake)
        return self.bce(d_fake_bp, label_real)
