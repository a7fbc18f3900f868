"""Synthetic data (the e2e suite's toydata) behind the package's own names."""

import toydata


def build_dataset():
    return toydata.make_data()


def get_batch(dataset, iteration, device):
    x, y = toydata.batch(dataset, iteration)
    return x.to(device), y.to(device)
