"""Helpers for testing code that uses iochar (hypothesis strategies)."""
