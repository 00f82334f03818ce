"""Variable-length attention as the tests' reference: torch eager, one sequence at a time, on
whatever device and dtype the packed tensors have (the tests pass float64 copies)."""

import torch


def prefix_sums(lengths, device="cpu") -> torch.Tensor:
    """int32 cu_seqlens of `lengths`: 0, then each sequence's end."""
    ends = torch.tensor([0, *lengths], dtype=torch.int32).cumsum(0, dtype=torch.int32)
    return ends.to(device)


def _sequence_attention(q, k, v, scale, causal):
    """One sequence's attention, (L, H, E) queries against (S, H, E) keys. A causal mask ends at
    the bottom right; a query that sees no key gives zeros."""
    q, k, v = (t.transpose(0, 1) for t in (q, k, v))
    L, S = q.shape[1], k.shape[1]
    seen = torch.ones(L, S, dtype=torch.bool, device=q.device)
    if causal:
        seen = seen.tril(S - L)
    s = (q @ k.transpose(1, 2) * scale).masked_fill(~seen, -1e300)
    p = torch.softmax(s, -1) * seen.any(-1, keepdim=True)
    return (p @ v).transpose(0, 1)


def varlen_reference(q, k, v, cu_q, cu_k, scale, causal):
    """The attention of packed (total_q, H, E) queries against (total_k, HK, E) keys and values,
    sequence by sequence (query head h reads key head h // (H // HK))."""
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    bounds = zip(cu_q.tolist(), cu_q[1:].tolist(), cu_k.tolist(), cu_k[1:].tolist())
    outputs = [
        _sequence_attention(q[q0:q1], k[k0:k1], v[k0:k1], scale, causal)
        for q0, q1, k0, k1 in bounds
    ]
    return torch.cat(outputs)
