"""`hook="triton"`: every Naiad kernel launch while such a session is active becomes a node
of the session's tree under its innermost open scope, named by the launch's metadata (the
kernel's name, or what the JIT function's `launch_metadata` names it), with the numbers that
metadata carries (`flops16`, `bytes`, ...) and the launch's time.

It rides on Triton's launch hooks (runtime/launch_hooks.py), added to the chains of
`triton.knobs.runtime.launch_enter_hook` / `launch_exit_hook` only while a hooked session is
active, so that a launch outside one takes the hot path untouched. The enter hook marks the
start; the exit hook marks the end, then asks for the metadata (after the launch, so that
`launch_metadata` sees the compiled kernel, as in Triton). A launch that compiles or loads its
kernel restarts its clock when the kernel is loaded (the kernel load hook), so its time is the
kernel's, not the compile's.
"""

from __future__ import annotations

from ... import knobs
from ...runtime.launch_hooks import HookChain

_hooked: list = []  # the active sessions with hook="triton"
# Metadata entries that are not metrics of the launch.
NOT_METRICS = ("name", "grid")


def _enter(metadata) -> None:
    for session in _hooked:
        session.open_kernel()


def _exit(metadata) -> None:
    # The end is marked before the metadata is made (the user's `launch_metadata` runs on the
    # host while the kernel may already be done on the device).
    ended = [(session, session.end_kernel()) for session in _hooked]
    made = metadata.get()
    metrics = {name: value for name, value in made.items() if _is_metric(name, value)}
    for session, launch in ended:
        if launch is not None:
            session.name_kernel(launch, str(made["name"]), metrics)


def _is_metric(name: str, value) -> bool:
    return (
        name not in NOT_METRICS and isinstance(value, (int, float)) and not isinstance(value, bool)
    )


def _loaded(module, function, name, metadata_group, hash) -> None:
    for session in _hooked:
        session.restart_kernel()


_SETTINGS = (
    (knobs.launch_enter_hook, _enter, False),
    (knobs.launch_exit_hook, _exit, True),
    (knobs.kernel_load_end_hook, _loaded, False),
)


def watch(sessions: list) -> None:
    """Record launches into `sessions` from now on: the hooks are set while any is given."""
    _hooked[:] = sessions
    for setting, hook, reverse in _SETTINGS:
        chain = setting.get()
        if sessions and not (isinstance(chain, HookChain) and hook in chain.calls):
            if not isinstance(chain, HookChain):  # unset, or one function the user set
                calls = [chain] if chain is not None else []
                chain = HookChain(reversed=reverse)
                chain.calls.extend(calls)
                knobs.set_override(setting.env, chain)
            chain.add(hook)
        elif not sessions and isinstance(chain, HookChain):
            chain.remove(hook)
