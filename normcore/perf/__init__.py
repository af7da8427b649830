"""Performance tooling, apart from the library: what ``normcore bench`` and the speed
experiment use to time normcore. Nothing in the layers imports it.

``threads``      how many threads NumPy's BLAS runs on (``blas_threads``, ``single_thread``)
``timing``       the one timing loop: runners interleaved round by round, medians, paired ratios
``cases``        what the benchmark measures: shapes, dtypes, layers, phases, the norms built
``baselines``    what each norm is timed against: the memory floor and PyTorch
``torch_model``  the PyTorch Transformer training step normcore's step is timed against
``runners``      running the cases: ``bench_shape`` (the norms), ``bench_transformer``,
                 ``bench_learning`` (the learning run)
``targets``      the fast tier's targets and how the results are read against them
``printing``     the printed tables, within 80 columns
``bench``        ``run_bench``: all of it, as ``normcore bench`` prints it
"""
