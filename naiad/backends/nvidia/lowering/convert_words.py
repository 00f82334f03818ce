"""8-bit elements exchanged within warps a word at a time (a `convert_lanes.Shuffle` of bytes).

A shuffle moves 32 bits, so the bytes a lane reads from one lane travel four to a word (a
pack of `Shuffle.packs`). Element by element, each byte a lane sends is chosen by its own
select, packed into the word, and unpacked and chosen again by the reader (the accept and
rotate selects): about ten instructions a byte. Here the choices are made on words:

- **Sending.** A lane's choice of register (`Shuffle.send`) is the same for every byte of a
  pack, so the pack's candidate words are whole words of source registers, and one select
  of words picks this lane's. Candidates of different packs are often the same registers
  (tutorial 06's fp8 P: a lane sends the word of its two rows at columns c, c + 1 or the one
  at c + 8, c + 9, each also another pack's), so each distinct word is assembled once.
- **Receiving.** A destination word (four consecutive destination registers, as a dot
  operand's 32-bit register holds them) takes its bytes, for every choice a reader can make
  (accept and rotate), from at most two received words: one `prmt` of the two, whose byte
  selector is per lane (a select of constants on the lane's choice bits, computed once at
  the top of the function). A destination word that would need more takes its bytes one
  by one, as the element-wise exchange does.

So the exchange is per word a select, a shuffle and a `prmt`. `convert_plan.py` takes it
over a round trip through shared memory whenever every destination word is one `prmt` and
a lane's sending choice is one select: the round trip assembles the same words to store them
and then stores, waits and loads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..layouts.bits import xor_bits
from .convert_lanes import Shuffle

PER_WORD = 4  # bytes to a 32-bit word


@dataclass(frozen=True)
class Gather:
    """Destination word: `prmt` of received words `words` (pack indices) with byte selector
    `selectors[c]` for a reader whose choice is c (accept bits low, rotate bits above)."""

    words: tuple[int, int]
    selectors: tuple[int, ...]


@dataclass(frozen=True)
class Words:
    """`sent[p][x]`: the source registers (byte order; None pads) of pack p's word for a
    sender whose choice is x; `gathers[w]`: destination word w (registers 4w .. 4w + 3),
    None where it takes its bytes one by one."""

    sent: tuple[tuple[tuple[int | None, ...], ...], ...]
    gathers: tuple[Gather | None, ...]

    @property
    def whole(self) -> bool:
        """Every destination word is one `prmt`."""
        return all(gather is not None for gather in self.gathers)


def _slots(plan: Shuffle) -> dict[tuple[int, int], tuple[int, int]]:
    """Where each round's value arrives: (round set, round) -> (pack, byte)."""
    return {key: (p, j) for p, pack in enumerate(plan.packs()) for j, key in enumerate(pack)}


def _byte_sources(plan: Shuffle, slots, register: int, choice: int) -> tuple[int, int]:
    """(pack, byte) that destination `register` reads for a reader of `choice`."""
    accept_bits = len(plan.accept.steps)
    accept, rotate = choice & ((1 << accept_bits) - 1), choice >> accept_bits
    target = plan.copies[register] ^ xor_bits(plan.rotate.steps, rotate)
    return slots[(plan.targets.index(target), accept)]


def _gather(plan: Shuffle, slots, registers: range) -> Gather | None:
    """The `prmt` that makes the destination word of `registers`, if two words hold it."""
    choices = 1 << (len(plan.accept.steps) + len(plan.rotate.steps))
    sources = [[_byte_sources(plan, slots, r, c) for r in registers] for c in range(choices)]
    words = sorted({p for bytes_ in sources for p, _ in bytes_})
    if len(words) > 2:
        return None
    pair = (words[0], words[-1])
    selectors = []
    for bytes_ in sources:
        selector = 0
        for k, (p, j) in enumerate(bytes_):
            selector |= (j + (PER_WORD if p != pair[0] else 0)) << (4 * k)
        selectors.append(selector)
    return Gather(pair, tuple(selectors))


@lru_cache(maxsize=256)
def plan_words(plan: Shuffle) -> Words | None:
    """The word-at-a-time form of a shuffle of 8-bit elements (None for other widths)."""
    if plan.bits != 8:
        return None
    sent = []
    for pack in plan.packs():
        bases = [plan.rounds[i][r].register for i, r in pack]
        pad = (None,) * (PER_WORD - len(bases))
        sent.append(
            tuple(
                tuple(b ^ xor_bits(plan.send.steps, x) for b in bases) + pad
                for x in range(1 << len(plan.send.steps))
            )
        )
    slots = _slots(plan)
    count = len(plan.copies)
    gathers = tuple(
        _gather(plan, slots, range(w, min(w + PER_WORD, count))) for w in range(0, count, PER_WORD)
    )
    return Words(tuple(sent), gathers)
