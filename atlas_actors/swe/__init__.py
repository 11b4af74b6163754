"""The SWE domain: SWE-bench instances in containers, graded by swebench, and the
searches' tools for code repair.
"""
