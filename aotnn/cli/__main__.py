"""``python -m aotnn.cli``."""
from .app import main

main()
