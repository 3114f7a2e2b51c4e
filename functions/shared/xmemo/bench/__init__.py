"""Benchmarks: separate commands that print figures and save them (never test asserts)."""
