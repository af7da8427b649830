"""Skeletons of the PyTorch track: torch.nn.Module subclasses whose forward is a TODO."""
