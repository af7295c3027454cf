"""gexec, installed by pip: the compiled module (gexec.gexec, the same one the build tree imports as
`gexec`) with its names here, its type stubs (__init__.pyi, py.typed) and the command (bin/gexec,
run by the `gexec` console entry and `python -m gexec`)."""
from . import gexec as _module

# Every public name of the module, so that `import gexec` reads the same from an installed package
# as from the build tree.
__all__ = [name for name in vars(_module) if not name.startswith("_")]
globals().update({name: getattr(_module, name) for name in __all__})
__version__ = _module.__version__
