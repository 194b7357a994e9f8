"""The deploy loop (loop) and its phases, each in its own module: verification, planning, submission; the diff and its values."""
