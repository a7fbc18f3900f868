"""A trainer without apex of its own: it only changes how a frame is cut and post-processed."""

from toyvid.trainers.vid2vid import Trainer as Vid2VidTrainer


class Trainer(Vid2VidTrainer):
    def post_process(self, data_t, net_G_output):
        net_G_output["fake_images"] = net_G_output["fake_images"].tanh() * 1.5
        return data_t, net_G_output
