"""`python -m mpigen`: the same as the `mpigen` command."""

from mpigen.cli import main

main()
