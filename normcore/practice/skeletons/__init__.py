"""The files ``normcore practice new NAME`` writes: a class to fill in, with its task and contract."""
