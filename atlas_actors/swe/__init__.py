"""The SWE domain: repositories, instances, grading and offline program repair."""
