"""The `gexec` console entry: runs the command installed with the module, with the same arguments."""
import os
import sys


def main():
    command = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "gexec")
    # exec, not a child: the exit status, signals (Ctrl-C) and the terminal are the command's own.
    os.execv(command, ["gexec", *sys.argv[1:]])
