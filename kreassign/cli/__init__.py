"""Command line front end: the only layer that prints, reads argv or exits."""
