"""Solution to lesson 04's exercise: ALBERT's parameter count, embeddings and layers."""


def albert_parameters(vocab_size, embedding_size, hidden_size, num_layers, sharing):
    V, E, H, L = vocab_size, embedding_size, hidden_size, num_layers
    table = V * E + (E * H + H) if E != H else V * H       # factorized: V x E, then E -> H
    attention = 4 * (H * H + H) + 2 * H                     # Q, K, V, O with biases + LayerNorm
    ffn = (H * 4 * H + 4 * H) + (4 * H * H + H) + 2 * H     # up, down with biases + LayerNorm
    attention_copies = 1 if sharing in ("all", "attention") else L
    ffn_copies = 1 if sharing in ("all", "ffn") else L
    return table + attention_copies * attention + ffn_copies * ffn


GRADERS = {"albert_parameters": albert_parameters}  # grader name in minibert.check -> solution
