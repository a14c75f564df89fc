"""A BERT-style transformer encoder: embeddings, then post-norm self-attention / feed-forward layers."""
from __future__ import annotations

import math

import numpy as np

from .. import nn, ops
from ..common.tensor import Tensor


class BertSelfAttention(nn.Cell):
    """Multi-head self-attention with the output projection, residual and layer norm."""

    def __init__(self, hidden_size: int, num_heads: int, epsilon: float = 1e-12):
        super().__init__()
        if hidden_size % num_heads:
            raise ValueError(f"num_heads: expected a divisor of hidden_size {hidden_size}, got {num_heads}")
        self.num_heads = num_heads
        self.head_size = hidden_size // num_heads
        self.query = nn.Dense(hidden_size, hidden_size)
        self.key = nn.Dense(hidden_size, hidden_size)
        self.value = nn.Dense(hidden_size, hidden_size)
        self.output = nn.Dense(hidden_size, hidden_size)
        self.norm = nn.LayerNorm((hidden_size,), epsilon=epsilon)
        self.softmax = nn.Softmax(axis=-1)
        self.scale = 1.0 / math.sqrt(self.head_size)

    def _heads(self, x, batch: int, seq: int):
        return ops.transpose(ops.reshape(x, (batch, seq, self.num_heads, self.head_size)), (0, 2, 1, 3))

    def construct(self, x):
        batch, seq, hidden = x.shape
        q = self._heads(self.query(x), batch, seq)
        k = self._heads(self.key(x), batch, seq)
        v = self._heads(self.value(x), batch, seq)
        scores = ops.matmul(q, ops.transpose(k, (0, 1, 3, 2))) * self.scale
        context = ops.matmul(self.softmax(scores), v)
        context = ops.reshape(ops.transpose(context, (0, 2, 1, 3)), (batch, seq, hidden))
        return self.norm(x + self.output(context))


class BertLayer(nn.Cell):
    """Self-attention, then the GELU feed-forward block with its residual and layer norm."""

    def __init__(self, hidden_size: int, num_heads: int, intermediate_size: int, epsilon: float = 1e-12):
        super().__init__()
        self.attention = BertSelfAttention(hidden_size, num_heads, epsilon)
        self.intermediate = nn.Dense(hidden_size, intermediate_size)
        self.activation = nn.GELU(approximate=False)
        self.output = nn.Dense(intermediate_size, hidden_size)
        self.norm = nn.LayerNorm((hidden_size,), epsilon=epsilon)

    def construct(self, x):
        x = self.attention(x)
        return self.norm(x + self.output(self.activation(self.intermediate(x))))


class BertEncoder(nn.Cell):
    """Token, position and segment embeddings followed by ``num_layers`` encoder layers.

    Args:
        vocab_size: token vocabulary. Default: 30522.
        hidden_size: model width. Default: 256.
        num_layers: encoder layers. Default: 2.
        num_heads: attention heads. Default: 4.
        intermediate_size: feed-forward width. Default: 1024.
        max_position: longest sequence. Default: 512.
        type_vocab_size: segment vocabulary. Default: 2.

    Inputs:
        - **input_ids** (Tensor) - int32 token ids of shape (batch, seq).

    Outputs:
        Tensor of shape (batch, seq, hidden_size): the last layer's hidden states.
    """

    def __init__(self, vocab_size: int = 30522, hidden_size: int = 256, num_layers: int = 2, num_heads: int = 4,
                 intermediate_size: int = 1024, max_position: int = 512, type_vocab_size: int = 2,
                 epsilon: float = 1e-12):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, hidden_size)
        self.position_embeddings = nn.Embedding(max_position, hidden_size)
        self.token_type_embeddings = nn.Embedding(type_vocab_size, hidden_size)
        self.embedding_norm = nn.LayerNorm((hidden_size,), epsilon=epsilon)
        self.layers = nn.CellList([BertLayer(hidden_size, num_heads, intermediate_size, epsilon)
                                   for _ in range(num_layers)])

    def construct(self, input_ids):
        batch, seq = input_ids.shape
        positions = Tensor(np.arange(seq, dtype=np.int32).reshape(1, seq))
        segments = Tensor(np.zeros((1, seq), dtype=np.int32))
        x = self.word_embeddings(input_ids) + self.position_embeddings(positions) + \
            self.token_type_embeddings(segments)
        x = self.embedding_norm(x)
        for layer in self.layers:
            x = layer(x)
        return x


def bert_encoder(vocab_size: int = 30522) -> BertEncoder:
    """The benchmark's encoder: 2 layers, hidden 256, 4 heads, feed-forward 1024."""
    return BertEncoder(vocab_size)
