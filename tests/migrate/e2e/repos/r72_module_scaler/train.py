"""Launcher without apex (bonito's entry point): runs the ``train`` command of the package."""

from toycall.cli.train import argparser, main

if __name__ == "__main__":
    main(argparser().parse_args())
