"""Files shipped into the workspace (container or sandbox) and run there with the
instance's own Python: ``atlas_trace.py`` (a pytest plugin: per-test outcomes, tracebacks
and line coverage) and ``atlas_batch.py`` (the batch worker). Standard library only."""
