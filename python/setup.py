"""pip install ./python from a built kemu tree bundles the libkemu.so.0 that
`make` built (../.libs/) into the package, so the installed package needs no
KEMU_LIBRARY. Without a built tree the package looks for an installed libkemu
(make install) at import time."""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        built = os.path.join(HERE, "..", ".libs", "libkemu.so.0")
        if os.path.exists(built):
            target = os.path.join(self.build_lib, "kemu", "libkemu.so.0")
            shutil.copyfile(os.path.realpath(built), target)


setup(cmdclass={"build_py": BuildWithLibrary})
