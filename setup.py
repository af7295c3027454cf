"""The build behind `pip install .`: the module and the `gexec` command come from the project's
CMake build, not from setuptools' compiler, so that they are the same as `scripts/build.sh` makes.

Environment: GEXEC_BUILD_DIR reuses a configured build tree (its module must be built for this
interpreter; CI's install test uses build/release this way) instead of build/pip-pyXY;
GEXEC_CMAKE_ARGS adds configure arguments (e.g. "-DCMAKE_CUDA_ARCHITECTURES=90-real").
"""
import importlib.machinery
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = os.path.dirname(os.path.abspath(__file__))


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(gexec VERSION ([0-9.]+)", f.read()).group(1)


def cmake(*args):
    print("setup.py: cmake " + " ".join(args), flush=True)
    subprocess.run(["cmake", *args], check=True)


def configure(build):
    args = ["-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DGEXEC_TESTS=OFF",
            f"-DPython3_EXECUTABLE={sys.executable}"]
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")) and shutil.which("ninja"):
        args += ["-G", "Ninja"]
    if shutil.which("ccache"):
        args += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_CUDA_COMPILER_LAUNCHER=ccache"]
    cmake(*args, *shlex.split(os.environ.get("GEXEC_CMAKE_ARGS", "")))


def built_module(build):
    """The module file for this interpreter, or a SystemExit that says why there is none."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    path = os.path.join(build, "python", "gexec" + suffix)
    if not os.path.exists(path):
        found = [f for f in os.listdir(os.path.join(build, "python")) if f.startswith("gexec.")
                 and f.endswith(".so")] if os.path.isdir(os.path.join(build, "python")) else []
        sys.exit(f"setup.py: {build} has no gexec{suffix} for {sys.executable}"
                 + (f" (it has {', '.join(found)}: built for another Python)" if found else
                    " (the configure summary says why the module is not built)"))
    return path


class BuildWithCMake(build_py):
    def run(self):
        super().run()
        given = os.environ.get("GEXEC_BUILD_DIR")
        build = os.path.abspath(given) if given else os.path.join(
            ROOT, "build", f"pip-py{sys.version_info.major}{sys.version_info.minor}")
        if not given:
            configure(build)
        cmake("--build", build, "--parallel", str(os.cpu_count() or 1), "--target", "gexec", "--target", "gexec_python")
        package = os.path.join(self.build_lib, "gexec")
        module = built_module(build)
        shutil.copy2(module, os.path.join(package, os.path.basename(module)))
        os.makedirs(os.path.join(package, "bin"), exist_ok=True)
        shutil.copy2(os.path.join(build, "gexec"), os.path.join(package, "bin", "gexec"))
        # One stub file for the build tree and the package: the package's names are the module's.
        shutil.copy2(os.path.join(ROOT, "python", "gexec.pyi"), os.path.join(package, "__init__.pyi"))


class PlatformDistribution(Distribution):
    """A wheel for this platform and Python: it carries a compiled module and command."""

    def has_ext_modules(self):
        return True


setup(
    version=project_version(),
    package_dir={"": "python/package"},
    packages=["gexec"],
    package_data={"gexec": ["py.typed"]},
    cmdclass={"build_py": BuildWithCMake},
    distclass=PlatformDistribution,
    zip_safe=False,
)
