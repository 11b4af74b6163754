"""Offline program repair: edit operators (and, later, fault localisation) with no LLM."""
