"""`python -m gexec ARGS` runs the installed command, as the `gexec` console entry does."""
from ._cli import main

main()
