"""Adversarial domain adaptation in a trainer class: a predictor trained on labelled source
batches while two critics tell its source outputs from its target outputs.  Under fp16 the
predictor and each critic go through amp.initialize one after the other; the predictor's update
logs its loss terms in a loop and adds a consistency term (its reference under no_grad()) when
that weight is on, then clips through a helper handed the named parameters; the critics share
one scaled backward."""

import torch
import torch.nn as nn
import torch.nn.functional as F

import toydata
from helpers import clip_named

try:
    from apex import amp
except ImportError:
    print("apex is not installed: fp16 is not available")


def critic():
    return nn.Sequential(nn.Linear(toydata.D_OUT, 16), nn.ReLU(), nn.Linear(16, 1))


class AdaptTrainer:
    def __init__(self, args, device):
        self.device = device
        self.fp16 = args.fp16
        self.consistency = args.consistency
        self.adv_weight = 0.05
        self.meters = {}
        self.G = toydata.make_mlp().to(self.device)
        self.D1, self.D2 = critic().to(self.device), critic().to(self.device)
        self.gen_opt = torch.optim.SGD(self.G.parameters(), lr=0.05, momentum=0.9)
        self.dis1_opt = torch.optim.Adam(self.D1.parameters(), lr=1e-3)
        self.dis2_opt = torch.optim.Adam(self.D2.parameters(), lr=1e-3)
        if args.fp16:
            self.G, self.gen_opt = amp.initialize(self.G, self.gen_opt, opt_level=args.opt_level, verbosity=0)
            self.D1, self.dis1_opt = amp.initialize(self.D1, self.dis1_opt, opt_level=args.opt_level, verbosity=0)
            self.D2, self.dis2_opt = amp.initialize(self.D2, self.dis2_opt, opt_level=args.opt_level, verbosity=0)

    def gen_update(self, x, x_t, y):
        self.gen_opt.zero_grad()
        pred = self.G(x)
        pred_t = self.G(x_t)
        loss_seg = F.mse_loss(pred, y)
        ones = torch.ones(pred_t.shape[0], 1, device=pred_t.device)
        loss_adv = F.binary_cross_entropy_with_logits(self.D1(pred_t), ones)
        loss_adv = loss_adv + F.binary_cross_entropy_with_logits(self.D2(pred_t), ones)
        loss = loss_seg + self.adv_weight * loss_adv
        for name, term in (("seg", loss_seg), ("adv", loss_adv)):
            self.meters[name] = term.item()
        if self.consistency > 0:
            with torch.no_grad():
                ref = pred_t.mean(dim=0, keepdim=True)
            loss_kl = ((pred_t - ref) ** 2).mean()
            loss = loss + self.consistency * loss_kl
        if self.fp16:
            with amp.scale_loss(loss, self.gen_opt) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        clip_named([(n, p) for n, p in self.G.named_parameters() if p.requires_grad], max_norm=0.5)
        self.gen_opt.step()
        return pred.detach(), pred_t.detach()

    def dis_update(self, pred, pred_t):
        self.dis1_opt.zero_grad()
        self.dis2_opt.zero_grad()
        ones = torch.ones(pred.shape[0], 1, device=pred.device)
        zeros = torch.zeros(pred_t.shape[0], 1, device=pred_t.device)
        loss_d1 = F.binary_cross_entropy_with_logits(self.D1(pred), ones)
        loss_d1 = loss_d1 + F.binary_cross_entropy_with_logits(self.D1(pred_t), zeros)
        loss_d2 = F.binary_cross_entropy_with_logits(self.D2(pred), ones)
        loss_d2 = loss_d2 + F.binary_cross_entropy_with_logits(self.D2(pred_t), zeros)
        loss = loss_d1 + loss_d2
        if self.fp16:
            with amp.scale_loss(loss, [self.dis1_opt, self.dis2_opt]) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        self.dis1_opt.step()
        self.dis2_opt.step()

    def save(self, path, step):
        state = {"G": self.G.state_dict(), "D1": self.D1.state_dict(), "D2": self.D2.state_dict(),
                 "gen_opt": self.gen_opt.state_dict(), "dis1_opt": self.dis1_opt.state_dict(),
                 "dis2_opt": self.dis2_opt.state_dict(), "step": step}
        if self.fp16:
            state["amp"] = amp.state_dict()
        torch.save(state, path)

    def load(self, path):
        state = torch.load(path, map_location="cpu")
        self.G.load_state_dict(state["G"])
        self.D1.load_state_dict(state["D1"])
        self.D2.load_state_dict(state["D2"])
        self.gen_opt.load_state_dict(state["gen_opt"])
        self.dis1_opt.load_state_dict(state["dis1_opt"])
        self.dis2_opt.load_state_dict(state["dis2_opt"])
        if self.fp16:
            amp.load_state_dict(state["amp"])
        return state["step"]
