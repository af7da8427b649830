"""Reference answers to the practice exercises: standalone NumPy files, one per layer.

Each file is what a good interview answer looks like: numpy only, its own tiny ``Parameter``,
nothing imported from normcore. ``normcore practice solution NAME`` prints one
(``answers.text``); the grader builds its catalogued mistakes by changing one line of these
files.
"""
