"""errkb: an error knowledge base built from source code."""

__version__ = "0.1.0"
