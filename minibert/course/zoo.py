"""The checkpoint zoo: every pretrained model of the course under one recipe.

A lesson has 150 s, and several papers' effects need more pretraining than that. So the zoo
pretrains each model once, offline (`make zoo`, about half an hour on two cores), under one
recipe, and commits the checkpoints with the record of what made them; the lessons load them and
fine-tune them live. One recipe means that a comparison compares ideas, not budgets:

- corpus:  4,000 ToyLang documents (`ToyLang(seed=0)`, 4 to 8 sentences each), word tokens;
- shape:   2 layers, H = 64, 2 heads, FFN 256, no dropout, sequences of at most 48 tokens;
- budget:  the same number of steps for everyone, each of 24 sequences (pairs of sentences, or
           as many packed tokens for RoBERTa), AdamW at a peak lr of 2e-3, 10% warmup, linear
           decay; the steps, tokens and FLOPs of each run are recorded (ELECTRA's generator and
           a distilled student's teacher are charged to them).

The members and what each keeps of its paper:

| name       | objective                                                                      |
|------------|--------------------------------------------------------------------------------|
| BERT       | MLM (80/10/10) + next-sentence prediction on sentence pairs                    |
| RoBERTa    | MLM with dynamic masking on FULL-SENTENCES packed inputs, no NSP               |
| ALBERT     | factorized embeddings (E = 32), one layer shared by both positions, MLM + SOP  |
| ELECTRA    | replaced-token detection, a generator a quarter as wide, shared embeddings     |
| DeBERTa    | disentangled relative attention and the Enhanced Mask Decoder, MLM             |
| StructBERT | MLM + trigram word-order recovery + the 3-way sentence objective               |
| DistilBERT | BERT's every other layer, distilled from the zoo's BERT with the triple loss   |
| TinyBERT   | 1 layer of H = 32, general distillation from the zoo's BERT (embeddings,       |
|            | hidden states through a projection, attention scores)                          |

Every batch is a pure function of its index (each builds its own generators from the run's seed
and the index), so a run resumes exactly where it stopped, and under torchrun N processes each
take their share of a step's micro-batches and compute the same steps (`minibert.train`).

    from minibert.course import zoo
    bert = zoo.load("BERT")                # checked against this recipe; .model, .encoder, .record
    bert = zoo.load("BERT", fraction=0.5)  # the snapshot at half of the steps
"""

from __future__ import annotations

import functools
import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from .. import data, toylang
from ..config import BertConfig
from ..corruption import electra_mask
from ..distill import triple_loss
from ..formats import full_sentences
from ..masking import mask_tokens
from ..models import (
    AlbertForPreTraining,
    BertForPreTraining,
    DebertaForMaskedLM,
    DistilBertForMaskedLM,
    ElectraForPreTraining,
    RobertaForMaskedLM,
    albert_config,
    distilbert_config,
    electra_configs,
    init_from_teacher,
    roberta_config,
)
from ..models.deberta import deberta_config
from ..models.electra import encoder_flops, mlm_step_flops
from ..models.structbert import StructBertForPreTraining
from ..models.tinybert import LayerOutputs, intermediate_loss, layer_mapping
from ..structure import sentence_structure_examples, shuffle_trigrams
from ..tokenizers import WordTokenizer
from . import paths
from .snapshots import load_snapshots, vocabulary_digest

__all__ = ["MEMBERS", "RECIPE", "Recipe", "Setup", "ZooModel", "build", "load", "path_of",
           "remake_command", "setup"]


@dataclass(frozen=True)
class Recipe:
    """The one pretraining recipe of the zoo (see the module docstring)."""

    documents: int = 4000
    sentences_per_document: tuple[int, int] = (4, 8)
    corpus_seed: int = 1
    max_len: int = 48
    hidden_size: int = 64
    num_layers: int = 2
    num_heads: int = 2
    intermediate_size: int = 256
    batch: int = 24                # sequences per optimizer step
    shards: int = 2                # micro-batches per step (so 2 processes can share a step)
    steps: int = 6752              # 15x lesson 13's old 450 steps, a multiple of 32
    lr: float = 2e-3
    warmup: float = 0.1
    seed: int = 0
    fractions: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0)   # when the snapshots are taken

    @property
    def micro_batch(self) -> int:
        return self.batch // self.shards


RECIPE = Recipe()
FIRST_LOSSES = 16                  # the first training losses a file records, for the replay
TEACHER = "BERT"                   # the distilled members learn from the zoo's BERT


def remake_command(name: str) -> str:
    return f"make zoo ONLY={name}"


def path_of(name: str, folder=None):
    return (paths.ZOO if folder is None else folder) / f"{name.lower()}.pt"


# ------------------------------------------------------------------------------ the data


@dataclass
class Setup:
    """Everything the recipe builds before training: language, corpus, examples, configs."""

    recipe: Recipe
    lang: toylang.ToyLang
    tokenizer: WordTokenizer
    documents: list                # ToyLang documents (lists of word lists)
    encoded: list                  # the same, as token ids
    sentences: list                # every sentence of the corpus, as token ids, in order
    config: BertConfig             # the shared encoder shape
    corpus_digest: str

    @property
    def shape(self) -> dict:
        return dict(vocab_size=self.tokenizer.vocab_size, hidden_size=self.recipe.hidden_size,
                    num_layers=self.recipe.num_layers, num_heads=self.recipe.num_heads,
                    intermediate_size=self.recipe.intermediate_size,
                    max_position=self.recipe.max_len, dropout=0.0, attention_dropout=0.0)


@functools.lru_cache(maxsize=2)
def setup(recipe: Recipe = RECIPE) -> Setup:
    """Build (once per process) the corpus and the configs of `recipe`."""
    lang = toylang.ToyLang(seed=0)
    tokenizer = WordTokenizer(lang.vocabulary)
    documents = lang.documents(recipe.documents, recipe.sentences_per_document,
                               seed=recipe.corpus_seed)
    encoded = [[tokenizer.encode_words(s) for s in doc] for doc in documents]
    sentences = [s for doc in encoded for s in doc]
    text = "\n".join(" ".join(" ".join(s) for s in doc) for doc in documents)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    made = Setup(recipe, lang, tokenizer, documents, encoded, sentences, None, digest)
    made.config = BertConfig(**made.shape)
    return made


def _generators(name: str, seed: int, index: int) -> tuple[random.Random, torch.Generator]:
    """The two generators of micro-batch `index` of a run: a pure function of its arguments."""
    key = int.from_bytes(hashlib.sha256(f"{name}/{seed}/{index}".encode()).digest()[:8], "big")
    return random.Random(key), torch.Generator().manual_seed(key % 2**63)


def _mask(s: Setup, ids: torch.Tensor, generator: torch.Generator, corrupt=mask_tokens):
    tok = s.tokenizer
    return corrupt(ids, vocab_size=tok.vocab_size, mask_id=tok.mask_id,
                   special_ids=tok.special_ids, generator=generator)


def pair_batches(s: Setup, name: str, examples: list, label_key: str, seed: int,
                 word_objective: bool = False) -> Callable[[int], dict]:
    """[CLS] A [SEP] B [SEP] micro-batches with MLM (and StructBERT's trigram shuffle)."""
    encoded = [(s.tokenizer.encode_words(a), s.tokenizer.encode_words(b), label)
               for a, b, label in examples]

    def next_batch(index: int) -> dict:
        rng, generator = _generators(name, seed, index)
        chosen = [encoded[rng.randrange(len(encoded))] for _ in range(s.recipe.micro_batch)]
        batch = data.pair_batch(s.tokenizer, [(a, b) for a, b, _ in chosen],
                                max_len=s.recipe.max_len)
        batch["input_ids"], batch["mlm_labels"] = _mask(s, batch["input_ids"], generator)
        if word_objective:
            batch["input_ids"], batch["word_labels"] = shuffle_trigrams(
                batch["input_ids"], batch["mlm_labels"], special_ids=s.tokenizer.special_ids,
                generator=generator)
        batch[label_key] = torch.tensor([label for *_, label in chosen])          # (B,)
        return batch
    return next_batch


def sentence_batches(s: Setup, name: str, seed: int, electra: bool = False
                     ) -> Callable[[int], dict]:
    """Two consecutive corpus sentences as one segment, masked (the MLM-only members)."""
    def next_batch(index: int) -> dict:
        rng, generator = _generators(name, seed, index)
        rows = [rng.randrange(len(s.sentences) - 1) for _ in range(s.recipe.micro_batch)]
        ids, attention_mask = data.pad_batch(
            [data.encode_single(s.tokenizer, s.sentences[r] + s.sentences[r + 1],
                                s.recipe.max_len) for r in rows], s.tokenizer.pad_id)   # (B, T)
        ids, labels = _mask(s, ids, generator, electra_mask if electra else mask_tokens)
        batch = {"input_ids": ids, "mlm_labels": labels, "attention_mask": attention_mask}
        if electra:
            batch["generator"] = generator                 # the generator's seeded samples
        return batch
    return next_batch


def packed_batches(s: Setup, name: str, seed: int) -> Callable[[int], dict]:
    """RoBERTa: FULL-SENTENCES inputs, as many as hold the tokens of a pair micro-batch."""
    examples = full_sentences(s.encoded, s.tokenizer, s.recipe.max_len)
    tokens = tokens_per_pair_batch(s)

    def next_batch(index: int) -> dict:
        rng, generator = _generators(name, seed, index)
        chosen, held = [], 0
        while held < tokens:
            example = examples[rng.randrange(len(examples))]
            chosen.append(example.input_ids)
            held += len(example.input_ids)
        ids, attention_mask = data.pad_batch(chosen, s.tokenizer.pad_id)         # (B, T)
        ids, labels = _mask(s, ids, generator)
        return {"input_ids": ids, "mlm_labels": labels, "attention_mask": attention_mask}
    return next_batch


def tokens_per_pair_batch(s: Setup) -> int:
    """Real tokens in a micro-batch of sentence pairs, on average: [CLS] A [SEP] B [SEP]."""
    mean_pair = 2 * sum(len(x) for x in s.sentences) / len(s.sentences) + 3
    return round(s.recipe.micro_batch * min(mean_pair, s.recipe.max_len))


# --------------------------------------------------------------------------- the members


class Distillation(nn.Module):
    """A student and a frozen teacher; forward(**batch) returns the distillation loss.

    Holding both in one module keeps the zoo's loss the same for every member
    (`model(**batch)["loss"]`) and lets DistributedDataParallel see only the student's
    trainable weights (the teacher's have requires_grad=False).
    """

    def __init__(self, student: nn.Module, teacher: nn.Module, kind: str):
        super().__init__()
        self.student, self.teacher, self.kind = student, teacher, kind
        self.teacher.eval().requires_grad_(False)

    def train(self, mode: bool = True):
        super().train(mode)
        self.teacher.eval()                       # the teacher stays a constant
        return self

    def forward(self, input_ids, attention_mask, mlm_labels, **_ignored) -> dict:
        with torch.no_grad():
            t = self.teacher(input_ids, attention_mask=attention_mask, mlm_labels=mlm_labels,
                             output_hidden_states=True, output_attentions=True)
        if self.kind == "triple":                  # DistilBERT
            out = self.student(input_ids, attention_mask=attention_mask, mlm_labels=mlm_labels)
            return triple_loss(out.logits, t.mlm_logits, out.targets,
                               out.encoder_output.last_hidden_state, t.bert.last_hidden_state,
                               attention_mask, temperature=2.0)
        # TinyBERT's general distillation: embeddings, hidden states and attention scores
        out = self.student(input_ids, attention_mask=attention_mask, output_hidden_states=True,
                           output_attentions=True)
        student = LayerOutputs(None, out.hidden_states, out.scores)
        teacher = LayerOutputs(None, t.bert.hidden_states, t.bert.scores)
        mapping = layer_mapping(len(out.hidden_states) - 1, len(t.bert.hidden_states) - 1)
        return intermediate_loss(student, teacher, mapping, self.student.fit_dense)


@dataclass(frozen=True)
class Member:
    """How one model of the zoo is built, fed and read."""

    name: str
    build: Callable[[Setup], nn.Module]               # the pretraining model, freshly initialised
    batches: Callable[[Setup, int], Callable[[int], dict]]  # (setup, seed) -> index -> batch
    encoder: Callable[[nn.Module], nn.Module]         # the part a downstream task fine-tunes
    summary: str
    teacher: str | None = None                        # a distilled member's teacher
    student: Callable[[Setup], nn.Module] | None = None   # what its file holds, built empty


def _electra(s: Setup) -> ElectraForPreTraining:
    return ElectraForPreTraining(*_electra_configs(s))


def _electra_configs(s: Setup):
    return electra_configs("bert-nano", generator_fraction=0.25, **s.shape)


def _distil_student(s: Setup) -> DistilBertForMaskedLM:
    return DistilBertForMaskedLM(distilbert_config(s.config, num_layers=s.config.num_layers // 2))


def _tiny_student_config(s: Setup) -> BertConfig:
    return s.config.replace(hidden_size=32, num_layers=1, intermediate_size=128)


class GeneralStudent(nn.Module):
    """TinyBERT's student as general distillation leaves it: the encoder and the projection
    W_h (d_S -> d_T) its hidden-state loss is measured through.

    The file keeps both, so the recorded loss can be measured again from the file, and the
    task-specific stage of TinyBERT can reuse W_h.
    """

    def __init__(self, config: BertConfig, teacher_hidden_size: int):
        super().__init__()
        from ..encoder import init_weights
        from ..models import BertModel
        self.bert = BertModel(config, add_pooler=False)
        self.fit_dense = nn.Linear(config.hidden_size, teacher_hidden_size)
        self.fit_dense.apply(lambda m: init_weights(m, config.initializer_range))

    def forward(self, input_ids, attention_mask=None, **options):
        return self.bert(input_ids, attention_mask=attention_mask, **options)


def _tiny_student(s: Setup) -> GeneralStudent:
    return GeneralStudent(_tiny_student_config(s), s.config.hidden_size)


def _distillation(s: Setup, kind: str, teacher: nn.Module) -> Distillation:
    if kind == "triple":
        student = _distil_student(s)
        init_from_teacher(student, teacher)            # every other layer of the teacher
        return Distillation(student, teacher, kind)
    return Distillation(_tiny_student(s), teacher, kind)    # its fit_dense: W_h


MEMBERS: dict[str, Member] = {m.name: m for m in (
    Member("BERT", lambda s: BertForPreTraining(s.config, nsp=True),
           lambda s, seed: pair_batches(s, "BERT", data.nsp_examples(s.documents, seed=3),
                                        "nsp_labels", seed),
           lambda m: m.bert, "MLM + next-sentence prediction"),
    Member("RoBERTa",
           lambda s: RobertaForMaskedLM(roberta_config(
               s.recipe.max_len, **{k: v for k, v in s.shape.items() if k != "max_position"})),
           lambda s, seed: packed_batches(s, "RoBERTa", seed),
           lambda m: m.roberta, "dynamic masking, FULL-SENTENCES, no NSP"),
    Member("ALBERT",
           lambda s: AlbertForPreTraining(albert_config("bert-nano", **s.shape,
                                                        embedding_size=32)),
           lambda s, seed: pair_batches(s, "ALBERT", data.sop_examples(s.documents, seed=3),
                                        "sop_labels", seed),
           lambda m: m.albert, "E = 32, one shared layer, MLM + sentence-order prediction"),
    Member("ELECTRA", _electra, lambda s, seed: sentence_batches(s, "ELECTRA", seed, True),
           lambda m: m.electra, "replaced-token detection, generator 1/4 wide"),
    Member("DeBERTa",
           lambda s: DebertaForMaskedLM(deberta_config("bert-nano", **s.shape, max_relative=16),
                                        emd=True),
           lambda s, seed: sentence_batches(s, "DeBERTa", seed),
           lambda m: m.deberta, "disentangled attention + Enhanced Mask Decoder, MLM"),
    Member("StructBERT", lambda s: StructBertForPreTraining(s.config, sentence_classes=3),
           lambda s, seed: pair_batches(
               s, "StructBERT", sentence_structure_examples(s.documents, seed=3),
               "sentence_labels", seed, word_objective=True),
           lambda m: m.bert, "MLM + word-order and 3-way sentence objectives"),
    Member("DistilBERT", lambda s: build("DistilBERT", s),
           lambda s, seed: sentence_batches(s, "DistilBERT", seed),
           lambda m: m.distilbert, "every other layer of BERT, triple loss",
           teacher=TEACHER, student=_distil_student),
    Member("TinyBERT", lambda s: build("TinyBERT", s),
           lambda s, seed: sentence_batches(s, "TinyBERT", seed),
           lambda m: m.bert, "1 layer, H = 32, general distillation", teacher=TEACHER,
           student=_tiny_student),
)}


def member(name: str) -> Member:
    if name not in MEMBERS:
        raise KeyError(f"no zoo member {name!r}; the zoo has {', '.join(MEMBERS)}")
    return MEMBERS[name]


def build(name: str, s: Setup | None = None, teacher: nn.Module | None = None) -> nn.Module:
    """The pretraining model of member `name`, initialised from the recipe's seed.

    A distilled member's teacher is the zoo's final BERT, loaded from its file (or `teacher`).
    """
    s = s or setup()
    m = member(name)
    torch.manual_seed(s.recipe.seed)
    if m.teacher is not None:
        teacher = teacher if teacher is not None else load(m.teacher, s=s).model
        return _distillation(s, "triple" if name == "DistilBERT" else "general", teacher)
    return m.build(s)


# ------------------------------------------------------------------------- compute counted


def step_flops(name: str, s: Setup | None = None) -> int:
    """FLOPs of one optimizer step of member `name` (forward + backward, `minibert.models.
    electra`'s convention), on the recipe's mean sequence length: the teacher's forward is
    charged to a distilled student, the generator to ELECTRA."""
    s = s or setup()
    length = round(tokens_per_pair_batch(s) / s.recipe.micro_batch)
    predicted = round(0.15 * length) * s.recipe.batch
    batch = s.recipe.batch
    if name == "ELECTRA":
        from ..models.electra import electra_step_flops
        disc, gen = _electra_configs(s)
        return electra_step_flops(disc, gen, batch, length, predicted)
    teacher_forward = mlm_step_flops(s.config, batch, length, predicted) // 3
    if name == "DistilBERT":
        student = distilbert_config(s.config, num_layers=s.config.num_layers // 2)
        return mlm_step_flops(student, batch, length, predicted) + teacher_forward
    if name == "TinyBERT":
        return 3 * encoder_flops(_tiny_student_config(s), batch, length) + teacher_forward
    config = s.config
    if name == "ALBERT":
        config = albert_config("bert-nano", **s.shape, embedding_size=32)
    return mlm_step_flops(config, batch, length, predicted)


# ---------------------------------------------------------------------------- loading


@dataclass
class ZooModel:
    """A zoo checkpoint, loaded: the pretraining model, its encoder and the file's record."""

    name: str
    model: nn.Module
    encoder: nn.Module
    record: dict
    fraction: float


def expected_record(name: str, s: Setup | None = None) -> dict:
    """What a file of member `name` must record to have been made by this recipe."""
    s = s or setup()
    return {"name": name, "recipe": recipe_dict(s.recipe), "config": s.config.to_dict(),
            "vocabulary": vocabulary_digest(s.tokenizer.id_to_token),
            "corpus": s.corpus_digest}


def recipe_dict(recipe: Recipe) -> dict:
    from dataclasses import asdict
    return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(recipe).items()}


def load(name: str, fraction: float = 1.0, *, s: Setup | None = None, folder=None) -> ZooModel:
    """Load member `name`'s snapshot at `fraction` of its steps (0.25, 0.5, 0.75 or 1.0).

    The file is refused, with the command that remakes it, when it is missing, damaged, or was
    made by another recipe, vocabulary or corpus than this code's.
    """
    s = s or setup()
    m = member(name)
    if fraction not in s.recipe.fractions:
        raise ValueError(f"fraction must be one of {s.recipe.fractions}, got {fraction!r}")
    record, states = load_snapshots(path_of(name, folder), remake=remake_command(name),
                                    expect=expected_record(name, s))
    torch.manual_seed(s.recipe.seed)
    model = m.student(s) if m.student is not None else m.build(s)
    model.load_state_dict(states[s.recipe.fractions.index(fraction)])
    model.eval()
    return ZooModel(name, model, m.encoder(model), record, fraction)


def saved_part(name: str, model: nn.Module) -> nn.Module:
    """What a file keeps of a run's model: all of it, or a distilled member's student."""
    return model.student if member(name).student is not None else model
