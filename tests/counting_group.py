"""An instrumented process group for the tests: a worker whose collectives are counted by kind."""


class Counting:
    """``group``'s rank, world_size, all_reduce and all_gather, each call counted in ``counts``
    and the values it sent and received added up in ``values``."""

    def __init__(self, group):
        self.group, self.rank, self.world_size = group, group.rank, group.world_size
        self.counts = {"all_reduce": 0, "all_gather": 0}
        self.values = {"sent": 0, "received": 0}

    def _count(self, op, vector, name):
        self.counts[op] += 1
        got = getattr(self.group, op)(vector, name)
        self.values["sent"] += vector.size
        self.values["received"] += got.size
        return got

    def all_reduce(self, vector, name=None):
        return self._count("all_reduce", vector, name)

    def all_gather(self, vector, name=None):
        return self._count("all_gather", vector, name)
