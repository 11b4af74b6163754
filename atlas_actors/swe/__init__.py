"""The SWE domain: environment, instances, workspace, grading, offline repair."""
