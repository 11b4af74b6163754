"""Build of the one compiled part: the ARC DSL's grid kernels (``atlas_actors.arc._kernels``).

Everything else is in pyproject.toml. The extension is optional: without a C compiler
the install still succeeds and the pure numpy versions in ``atlas_actors.arc.grids``
are used (``atlas_actors.arc.kernels.COMPILED`` says which).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "atlas_actors.arc._kernels",
            sources=["atlas_actors/arc/_kernels.c"],
            extra_compile_args=["-O2"],
            optional=True,
        )
    ]
)
