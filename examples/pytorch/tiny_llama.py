"""A Llama-style decoder written with torch.nn (transformers is not a dependency): token
embedding, RMSNorm, rotary-free causal self-attention with grouped key/value heads, a SiLU-gated
MLP, a tied output head and the cross-entropy loss. Small and random: llama_ops.py runs it under
naiad.ops, and tests/ops/test_model.py checks it there."""

import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    def __init__(self, dim, heads, kv_heads, hidden):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.q = nn.Linear(dim, dim, bias=False)
        self.kv = nn.Linear(dim, 2 * kv_heads * self.head_dim, bias=False)
        self.o = nn.Linear(dim, dim, bias=False)
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)
        self.norm1 = nn.RMSNorm(dim, eps=1e-6)
        self.norm2 = nn.RMSNorm(dim, eps=1e-6)

    def attention(self, x):
        b, t, _ = x.shape
        q = self.q(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k, v = self.kv(x).view(b, t, 2, self.kv_heads, self.head_dim).unbind(2)
        repeat = self.heads // self.kv_heads
        k = k.transpose(1, 2).repeat_interleave(repeat, 1)
        v = v.transpose(1, 2).repeat_interleave(repeat, 1)
        scores = q @ k.transpose(-1, -2) / self.head_dim**0.5
        causal = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        weights = torch.softmax(scores.masked_fill(causal, float("-inf")), -1)
        return self.o((weights @ v).transpose(1, 2).reshape(b, t, -1))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class TinyLlama(nn.Module):
    def __init__(self, vocab=64, dim=32, heads=4, kv_heads=2, hidden=64, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(dim, heads, kv_heads, hidden) for _ in range(layers))
        self.norm = nn.RMSNorm(dim, eps=1e-6)

    def forward(self, tokens, labels):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        logits = self.norm(x) @ self.embed.weight.t()
        loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten())
        return logits, loss
