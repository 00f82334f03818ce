"""The fixtures every test module of the package shares, built once per session.

The imports stay inside the fixtures: importing `harness` skips the importing module unless the
process runs with TRITON_INTERPRET=1 and triton imports, and a conftest must not be skipped that way
(the test modules are, each when it imports `harness`).
"""

import pytest


@pytest.fixture(scope="session")
def kernels(tmp_path_factory):
    """(triton module, naiad module): the generated kernels, imported from real files."""
    from .harness import generate_kernels

    return generate_kernels(tmp_path_factory.mktemp("differential"))


@pytest.fixture(scope="session")
def frontend(tmp_path_factory):
    """key -> ("ok", static_print output, TTIR) or ("error", message, None): compiled Triton's
    front end for sm_90, run once in a child process (see frontend_oracle.py)."""
    from .frontend_oracle import compile_frontend

    return compile_frontend(tmp_path_factory.mktemp("frontend"))
