"""Offline program repair: fault localisation, the frozen catalogue of edit operators,
the fast candidate-evaluation loop, and the proposer that puts them in a tree search."""
