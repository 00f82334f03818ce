"""Variable-length attention as the tests' reference: torch eager, one sequence at a time, on
whatever device and dtype the packed tensors have (the tests pass float64 copies); with dropout,
the probabilities a (sequences, H, max_seqlen_q, max_seqlen_k) keep mask drops dropped."""

import torch


def prefix_sums(lengths, device="cpu") -> torch.Tensor:
    """int32 cu_seqlens of `lengths`: 0, then each sequence's end."""
    ends = torch.tensor([0, *lengths], dtype=torch.int32).cumsum(0, dtype=torch.int32)
    return ends.to(device)


def _sequence_scores(q, k, scale, causal):
    """One sequence's (H, L, S) scores of (H, L, E) queries against (H, S, E) keys, a large
    negative number where a key is hidden (a causal mask ends at the bottom right), and which
    queries see a key at all."""
    L, S = q.shape[1], k.shape[1]
    seen = torch.ones(L, S, dtype=torch.bool, device=q.device)
    if causal:
        seen = seen.tril(S - L)
    s = (q @ k.transpose(1, 2) * scale).masked_fill(~seen, -1e300)
    return s, seen.any(-1, keepdim=True)


def _sequence_attention(q, k, v, scale, causal, keep=None, p=0.0):
    """One sequence's attention, (L, H, E) queries against (S, H, E) keys; a query that sees no
    key gives zeros. `keep`: the (H, at least L, at least S) mask of the probabilities kept by a
    dropout of probability p (the kept ones scaled by 1 / (1 - p))."""
    q, k, v = (t.transpose(0, 1) for t in (q, k, v))
    s, sees = _sequence_scores(q, k, scale, causal)
    probabilities = torch.softmax(s, -1) * sees
    if keep is not None:
        probabilities = probabilities * keep[:, : q.shape[1], : k.shape[1]] / (1 - p)
    return (probabilities @ v).transpose(0, 1)


def _sequences(q, k, v, cu_q, cu_k):
    """Each sequence's queries, keys and values, the keys' heads repeated for grouped ones."""
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    bounds = zip(cu_q.tolist(), cu_q[1:].tolist(), cu_k.tolist(), cu_k[1:].tolist())
    return [(q[q0:q1], k[k0:k1], v[k0:k1]) for q0, q1, k0, k1 in bounds]


def varlen_reference(q, k, v, cu_q, cu_k, scale, causal, keep=None, p=0.0):
    """The attention of packed (total_q, H, E) queries against (total_k, HK, E) keys and values,
    sequence by sequence (query head h reads key head h // (H // HK)); `keep`: the (sequences,
    H, max_seqlen_q, max_seqlen_k) mask of a dropout of probability p, sequence b's at [b]."""
    sequences = _sequences(q, k, v, cu_q, cu_k)
    masks = [None] * len(sequences) if keep is None else keep
    return torch.cat(
        [_sequence_attention(*qkv, scale, causal, m, p) for qkv, m in zip(sequences, masks)]
    )


def varlen_logsumexp(q, k, cu_q, cu_k, scale, causal):
    """(H, total_q): each query's log-sum-exp of its scores, -inf where it sees no key."""
    rows = []
    for q_seq, k_seq, _ in _sequences(q, k, k, cu_q, cu_k):
        s, sees = _sequence_scores(q_seq.transpose(0, 1), k_seq.transpose(0, 1), scale, causal)
        rows.append(torch.logsumexp(s, -1).masked_fill(~sees[..., 0], float("-inf")))
    return torch.cat(rows, 1)
