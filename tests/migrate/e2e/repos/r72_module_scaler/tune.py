"""Launcher without apex (bonito's entry point): runs the ``tune`` command of the package."""

from toycall.cli.tune import argparser, main

if __name__ == "__main__":
    main(argparser().parse_args())
