"""cluster layer."""
