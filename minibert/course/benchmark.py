"""Lesson 13's small benchmark, in the spirit of GLUE: four ToyLang tasks, few labels.

Each task asks for something different, so together they tell when pretraining pays:

| task         | input                  | needs                                  | classes |
|--------------|------------------------|----------------------------------------|---------|
| topic        | one sentence           | topical words (a bag of words will do) | 4       |
| word order   | one sentence           | order: were two neighbours swapped?    | 2       |
| continuation | a pair [CLS] A [SEP] B | the entity chain and order markers     | 2       |
| tags         | one sentence, per word | each open-class word's part of speech  | 4       |

Every encoder is fine-tuned the same way: a fresh head on its last hidden states (the mean over
real tokens and a linear layer for the sentence tasks, a linear layer on each word for tags),
every weight trained for `STEPS` (100) steps of `BATCH` examples drawn from the labelled set at lr
`LR` (10% warmup), from `labels` labelled examples, and scored on 1,000 held-out examples.
Mean pooling works for all the encoders, whether or not their pretraining trained a `[CLS]`
vector (ELECTRA's and RoBERTa's never did).

`score(member, task, labels, seed)` is a plain function of plain arguments, so that
`run_side_by_side` can run many at once; "scratch" is the same BERT encoder with random weights.
"""

from __future__ import annotations

import functools
import inspect
import random
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .. import data, toylang
from ..measure import accuracy
from ..models import BertModel
from ..pretrained import mean_pool
from ..train import parameter_groups, set_seed, train
from . import zoo

__all__ = ["BATCH", "LABEL_COUNTS", "LR", "STEPS", "TASKS", "EncoderHead", "Task", "encoder_of",
           "load_task", "score"]

TASKS = ("topic", "word order", "continuation", "tags")
LABEL_COUNTS = (32, 256)
TEST_SIZE = 1000
STEPS, BATCH, LR = 100, 24, 1e-3
MAX_LEN = 48
TRAIN_SEED, TEST_SEED = 10, 11          # ToyLang seeds of the labelled and held-out examples


@dataclass
class Task:
    """One task's tensors: `train` and `test`, dicts of input_ids, attention_mask,
    token_type_ids (B, T) and labels ((B,), or (B, T) with -100 off the words for tags)."""

    name: str
    classes: int
    per_token: bool
    train: dict
    test: dict


# Tagged: the open word classes, whose words are many and mostly unseen among few labels (the
# closed classes, a handful of words each, are not scored).
TAG_NAMES = ("NOUN", "VERB", "ADJ", "ADV")


def _examples(lang: toylang.ToyLang, name: str, n: int, seed: int) -> list:
    """(words or (words_a, words_b), label) pairs; for tags the label is the tag list."""
    if name == "topic":
        return toylang.topic_task(lang, n, seed)
    if name == "word order":
        return toylang.acceptability_task(lang, n, seed)
    if name == "continuation":
        return toylang.continuation_task(lang, n, seed)
    if name == "tags":
        sentences = [w for doc in lang.documents(n // 4 + 1, 4, seed=seed) for w in doc][:n]
        return [(words, [TAG_NAMES.index(t) if t in TAG_NAMES else -100
                         for t in lang.tags(words)]) for words in sentences]
    raise KeyError(f"unknown task {name!r}; the tasks are {', '.join(TASKS)}")


def _encode(s: zoo.Setup, name: str, examples: list) -> dict:
    tok = s.tokenizer
    if name == "continuation":
        batch = data.pair_batch(tok, [(tok.encode_words(a), tok.encode_words(b))
                                      for (a, b), _ in examples], max_len=MAX_LEN)
        batch["labels"] = torch.tensor([label for _, label in examples])          # (N,)
        return batch
    ids, mask = data.pad_batch([data.encode_single(tok, tok.encode_words(w), MAX_LEN)
                                for w, _ in examples], tok.pad_id)                 # (N, T) x2
    batch = {"input_ids": ids, "attention_mask": mask, "token_type_ids": torch.zeros_like(ids)}
    if name == "tags":                       # one label per word: position 0 is [CLS]
        labels = torch.full_like(ids, -100)                                        # (N, T)
        for row, (_, tags) in enumerate(examples):
            kept = tags[:MAX_LEN - 2]
            labels[row, 1:1 + len(kept)] = torch.tensor(kept)
        batch["labels"] = labels
    else:
        batch["labels"] = torch.tensor([label for _, label in examples])           # (N,)
    return batch


@functools.lru_cache(maxsize=16)
def load_task(name: str, labels: int) -> Task:
    """Task `name` with `labels` labelled examples (the same for every model and seed)."""
    s = zoo.setup()
    if labels < 2:
        raise ValueError(f"labels must be at least 2, got {labels}")
    classes = {"topic": s.lang.n_topics, "tags": len(TAG_NAMES)}.get(name, 2)
    train_set = _encode(s, name, _examples(s.lang, name, labels, TRAIN_SEED))
    test_set = _encode(s, name, _examples(s.lang, name, TEST_SIZE, TEST_SEED))
    return Task(name, classes, name == "tags", train_set, test_set)


class EncoderHead(nn.Module):
    """Any course encoder with a fresh linear head: mean-pooled, or on every token."""

    def __init__(self, encoder: nn.Module, hidden_size: int, classes: int, per_token: bool):
        super().__init__()
        self.encoder, self.per_token = encoder, per_token
        self.head = nn.Linear(hidden_size, classes)
        self._types = "token_type_ids" in inspect.signature(encoder.forward).parameters

    def forward(self, input_ids, attention_mask, token_type_ids=None, labels=None):
        extra = {"token_type_ids": token_type_ids} if self._types else {}
        hidden = self.encoder(input_ids, attention_mask=attention_mask,
                              **extra).last_hidden_state                        # (B, T, H)
        if self.per_token:
            logits = self.head(hidden)                                           # (B, T, C)
            loss = None if labels is None else F.cross_entropy(
                logits.flatten(0, 1), labels.flatten(), ignore_index=-100)
        else:
            logits = self.head(mean_pool(hidden, attention_mask))                # (B, C)
            loss = None if labels is None else F.cross_entropy(logits, labels)
        return {"loss": loss, "logits": logits}


def encoder_of(member: str, fraction: float = 1.0, seed: int = 0) -> tuple[nn.Module, int]:
    """(a fresh copy of member's encoder, its width); "scratch": BERT's shape, random."""
    s = zoo.setup()
    if member == "scratch":
        torch.manual_seed(seed)
        return BertModel(s.config, add_pooler=False), s.config.hidden_size
    loaded = _loaded(member, fraction)
    encoder = _copy(loaded.encoder)
    width = encoder.config.hidden_size
    return encoder, width


@functools.lru_cache(maxsize=None)
def _loaded(member: str, fraction: float) -> zoo.ZooModel:
    return zoo.load(member, fraction)


def _copy(module: nn.Module) -> nn.Module:
    import copy
    return copy.deepcopy(module)


def test_accuracy(model: EncoderHead, t: Task) -> float:
    """Accuracy on the held-out set: per sentence, or per word for tags."""
    model.eval()
    with torch.no_grad():
        logits = model(**{k: v for k, v in t.test.items() if k != "labels"})["logits"]
    if t.per_token:
        keep = t.test["labels"] != -100                                          # (N, T)
        return (logits.argmax(-1)[keep] == t.test["labels"][keep]).float().mean().item()
    return accuracy(logits, t.test["labels"])


def fine_tuned(member: str, task_name: str, labels: int, seed: int, *, fraction: float = 1.0,
               steps: int = STEPS) -> EncoderHead:
    """Member's encoder fine-tuned on the task with a fresh head (see the module docstring)."""
    t = load_task(task_name, labels)
    encoder, width = encoder_of(member, fraction, seed)
    set_seed(seed)                    # after loading, which seeds as its recipe says: the head
    model = EncoderHead(encoder, width, t.classes, t.per_token)   # is the same, cached or not
    n = len(t.train["labels"])

    def next_batch(step):
        rows = random.Random(seed * 1_000_003 + step).choices(range(n), k=BATCH)
        return {key: value[rows] for key, value in t.train.items()}
    # AdamW as train() builds it, with the multi-tensor update: 4x faster at these sizes
    optimizer = torch.optim.AdamW(parameter_groups(model, 0.01), lr=LR, foreach=True)
    train(model, next_batch, lambda m, batch: m(**batch)["loss"], steps=steps, warmup=0.1,
          seed=seed, progress=False, optimizer=optimizer)
    return model.eval()


def score(member: str, task: str, labels: int, seed: int, fraction: float = 1.0,
          steps: int = STEPS) -> float:
    """Held-out accuracy of member's encoder fine-tuned on `task` from `labels` examples."""
    torch.set_num_threads(1)
    return test_accuracy(fine_tuned(member, task, labels, seed, fraction=fraction, steps=steps),
                         load_task(task, labels))
