"""Running a pipeline of named passes the way every compiler stage of Naiad does.

A pass's own bug becomes Naiad's InternalError naming the pass and the file holding the IR it
failed on (under `NAIAD_DUMP_DIR` if set); the user's errors (a `NaiadError`, e.g. a
CompilationError raised while converting) pass through; `NAIAD_VERIFY=1` verifies after each
pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .. import knobs
from ..errors import InternalError, NaiadError
from ..ir import Operation
from ..ir.passes import Pass, PassFailure, PassManager


def run_pipeline(
    passes: Iterable[str | Pass],
    module: Operation,
    after_each: Callable[[Pass, Operation], None] | None = None,
    before_each: Callable[[Pass, Operation], None] | None = None,
) -> None:
    """Run `passes` (names or Pass objects) on `module` in order; `after_each(pass, module)`
    sees the module after every pass (NAIAD_DUMP_PASSES), `before_each` before every pass
    (NAIAD_PRINT_PASSES)."""
    manager = PassManager(
        list(passes),
        verify_each=knobs.verify.get(),
        dump_dir=knobs.dump_dir.get() or None,
        expected=(NaiadError,),
        after_each=after_each,
        before_each=before_each,
    )
    try:
        manager.run(module)
    except PassFailure as failure:
        raise InternalError(str(failure)) from failure
