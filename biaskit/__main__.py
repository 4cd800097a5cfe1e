"""``python -m biaskit`` (and ``torchrun -m biaskit``): the same as the ``biaskit`` command."""

from biaskit.cli import main

if __name__ == "__main__":
    main()
