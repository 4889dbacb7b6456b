"""execution layer."""
