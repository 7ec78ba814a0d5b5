"""Only for the optional C kernels (dustonline/_kernels.c: alignment matrix, simhash
blocks); everything else is in pyproject.toml. Without a C compiler the build goes on
without them and their pure-Python twins are used (same results, slower)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("dustonline._kernels", ["dustonline/_kernels.c"], optional=True)])
