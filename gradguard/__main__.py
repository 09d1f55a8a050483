"""`python -m gradguard` runs the command-line interface."""

from gradguard.cli import main

if __name__ == "__main__":
    main()
