"""tito: the TinyTorch course command line (students and staff)."""

__version__ = "0.1.0"
