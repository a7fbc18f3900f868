"""apexcompat-migrate: rewrite apex training code into native PyTorch.

Built on LibCST so that everything the tool does not rewrite keeps its exact bytes.
This package never imports torch: it runs where torch is not installed.
"""

__version__ = "0.1.0"
