"""Running averages for the fitter's log (star-imported by trainers/fitter.py)."""


class Average:
    def __init__(self):
        self.total, self.count = 0.0, 0

    def update(self, value):
        self.total += value
        self.count += 1
        return self.total / self.count
