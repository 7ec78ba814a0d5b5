"""Only for the optional C kernel of the alignment (dustonline/_aligndp.c); everything
else is in pyproject.toml. Without a C compiler the build goes on without it and the
pure-Python kernel is used (same results, about half the alignment speed)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("dustonline._aligndp", ["dustonline/_aligndp.c"], optional=True)])
