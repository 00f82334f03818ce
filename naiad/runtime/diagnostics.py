"""Turning an exception raised while running a kernel into an error at the user's own line.

The innermost frame outside Naiad's package is the user's line (a kernel or a jit function it
called); the user frames above it are the call chain. Naiad's own frames are hidden unless
`NAIAD_TRACEBACK=1`.
"""

from __future__ import annotations

from .. import errors, knobs


def located(exc: BaseException, kernel_name: str) -> errors.CompilationError:
    """`exc` as a CompilationError (of a matching builtin type) at the innermost user frame."""
    if isinstance(exc, errors.CompilationError) and exc.location is not None:
        return exc
    frames = errors.user_frames(exc)
    message = errors.error_message(exc)
    location = frames[-1] if frames else None
    chain = tuple(reversed(frames[:-1]))
    if location is None:
        message = f"in kernel `{kernel_name}`: {message}"
    help = exc.help if isinstance(exc, errors.CompilationError) else ""
    return errors.located_error_class(exc)(message, location, help=help, call_chain=chain)


def reraise(exc: BaseException, kernel_name: str):
    """Raise `exc` located; with Naiad's frames hidden unless NAIAD_TRACEBACK=1."""
    error = located(exc, kernel_name)
    if knobs.traceback.get():
        raise error from exc
    if error is not exc:
        # The original error, as Triton's errors keep it; an unlocated CompilationError is
        # replaced by the located one, which keeps its cause.
        unlocated = isinstance(exc, errors.CompilationError)
        error.__cause__ = exc.__cause__ if unlocated else exc
    raise errors.without_naiad_frames(error)
