"""Reference answers of the PyTorch track: torch.nn.Module subclasses, forward only."""
