"""Linking raise sites to the command-line flags their guards and messages read."""
