"""Offline program repair: fault localisation and the fast candidate-evaluation loop."""
