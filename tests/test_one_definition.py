"""The library functions that replaced the lessons' own copies compute what the copies did.

Each test holds the lesson's former definition, copied as it was (its globals made locals),
and checks the library function gives the same numbers on the same inputs, exactly: so the
lessons' outputs did not move when they started importing the library's.
"""

from __future__ import annotations

import copy
import random

import pytest
import torch

from experiments import electra_depth
from minibert import data, finetune, toylang
from minibert.config import BertConfig
from minibert.formats import pack_documents
from minibert.masking import mask_tokens, masked_lm_loss
from minibert.measure import accuracy, heldout_mlm_loss, roc_auc
from minibert.models import BertForPreTraining, BertForSequenceClassification, RobertaForMaskedLM
from minibert.models.distilbert import DistilBertClassifier, DistilBertModel
from minibert.models.electra import ElectraForSequenceClassification
from minibert.models.roberta import roberta_config
from minibert.tokenizers import WordTokenizer
from minibert.train import model_loss, set_seed, train

LANG = toylang.ToyLang(seed=0)
TOKENIZER = WordTokenizer(LANG.vocabulary)


def tiny_config(**changes) -> BertConfig:
    return BertConfig(vocab_size=TOKENIZER.vocab_size, hidden_size=16, num_layers=1,
                      num_heads=2, intermediate_size=32, max_position=32, **changes)


def encoded(examples):
    # Lesson 01's encode_sentences: id lists of different lengths, and their labels.
    ids = [data.encode_single(TOKENIZER, TOKENIZER.encode_words(words), 32)
           for words, _ in examples]
    return ids, torch.tensor([label for _, label in examples])


def labelled_set(ids, labels):
    input_ids, attention_mask = data.pad_batch(ids, TOKENIZER.pad_id)
    return {"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels}


# ------------------------------------------------------------------------------- roc_auc


def roc_auc_06(scores, positive):
    # Probability that a random positive scores above a random negative (ties count half).
    pos, neg = scores[positive], scores[~positive]
    greater = (pos[:, None] > neg[None, :]).float().mean()
    ties = (pos[:, None] == neg[None, :]).float().mean()
    return (greater + 0.5 * ties).item()


def auc_11(scores, labels):
    # P(score of a positive > score of a negative), ties counted half.
    pos, neg = scores[labels == 1], scores[labels == 0]
    greater = (pos[:, None] > neg[None, :]).float() + 0.5 * (pos[:, None] == neg[None, :]).float()
    return greater.mean().item()


def test_roc_auc_is_lesson_06s_and_lesson_11s_auc():
    g = torch.Generator().manual_seed(0)
    for n in (7, 100, 1000):
        scores, labels = torch.randn(n, generator=g), torch.randint(0, 2, (n,), generator=g)
        # Continuous scores have no ties: the three are the same float.
        assert roc_auc(scores, labels == 1) == auc_11(scores, labels) == roc_auc_06(scores,
                                                                                  labels == 1)
        # Ties (rounded scores): lesson 11's formula exactly; lesson 06's summed two rounded
        # means, so it can differ in the last float32 digit.
        rounded = scores.round()
        assert roc_auc(rounded, labels == 1) == auc_11(rounded, labels)
        assert roc_auc(rounded, labels == 1) == pytest.approx(roc_auc_06(rounded, labels == 1),
                                                              abs=1e-6)


def test_roc_auc_refuses_what_it_cannot_score():
    scores = torch.randn(4)
    with pytest.raises(ValueError, match="labels == 1"):
        roc_auc(scores, torch.tensor([0, 1, 0, 1]))
    with pytest.raises(ValueError, match="one positive and one negative"):
        roc_auc(scores, torch.ones(4, dtype=torch.bool))


# ------------------------------------------------------------------------------- masked-LM losses


def masked_batch(seed):
    ids = [data.encode_single(TOKENIZER, TOKENIZER.encode_words(s), 32)
           for doc in LANG.documents(4, (4, 8), seed=seed) for s in doc]
    input_ids, attention_mask = data.pad_batch(ids, TOKENIZER.pad_id)
    masked, labels = mask_tokens(input_ids, vocab_size=TOKENIZER.vocab_size,
                                 mask_id=TOKENIZER.mask_id, special_ids=TOKENIZER.special_ids,
                                 generator=torch.Generator().manual_seed(seed))
    return {"input_ids": masked, "attention_mask": attention_mask, "mlm_labels": labels}


def test_heldout_mlm_loss_is_lesson_03s_mlm_loss():
    @torch.no_grad()
    def mlm_loss(model, batch):
        # Mean masked-LM cross-entropy on a fixed batch, in eval mode.
        model.eval()
        out = model(batch["input_ids"], attention_mask=batch["attention_mask"],
                    mlm_labels=batch["mlm_labels"])
        return (out.mlm_loss if isinstance(model, BertForPreTraining) else out.loss).item()

    torch.manual_seed(0)
    models = [RobertaForMaskedLM(roberta_config(32, vocab_size=TOKENIZER.vocab_size, num_layers=1,
                                                hidden_size=16, num_heads=2)),
              BertForPreTraining(tiny_config(), nsp=True),
              BertForPreTraining(tiny_config(), nsp=False)]
    batch = masked_batch(1)
    for model in models:
        model.train()
        assert heldout_mlm_loss(model, batch) == mlm_loss(model, batch)
        assert not model.training


def test_model_loss_is_lesson_07s_mlm_loss():
    def mlm_loss(model, batch):
        return model(**batch).loss

    torch.manual_seed(0)
    model, batch = BertForPreTraining(tiny_config(), nsp=False), masked_batch(2)
    torch.manual_seed(1)                                           # the same dropout masks
    ours = model_loss(model, batch)
    torch.manual_seed(1)
    assert torch.equal(ours, mlm_loss(model, batch))


def test_masked_lm_loss_is_lesson_08s_and_lesson_12s_mlm_loss():
    tokenizer = TOKENIZER
    corpus_x, corpus_mask = data.words_batch(
        tokenizer, [s for doc in LANG.documents(20, (4, 8), seed=1) for s in doc], 32)
    masking, corpus_rows = torch.Generator().manual_seed(0), data.row_sampler(len(corpus_x), 0, 8)

    def mlm_loss(model, step):                                     # lesson 08's
        r = corpus_rows(step)
        ids, labels = mask_tokens(corpus_x[r], vocab_size=tokenizer.vocab_size,
                                  mask_id=tokenizer.mask_id, special_ids=tokenizer.special_ids,
                                  generator=masking)
        return model(ids, attention_mask=corpus_mask[r], mlm_labels=labels).loss

    mask_generator = torch.Generator().manual_seed(0)

    def mlm_loss_12(model, batch):                                 # lesson 12's (vocab = tokenizer)
        masked, labels = mask_tokens(batch["input_ids"], vocab_size=tokenizer.vocab_size,
                                     mask_id=tokenizer.mask_id,
                                     special_ids=tokenizer.special_ids, generator=mask_generator)
        return model(masked, attention_mask=batch["attention_mask"], mlm_labels=labels).loss

    def run(loss_fn, batches):
        set_seed(0)
        model = BertForPreTraining(tiny_config(), nsp=False)
        return train(model, batches, loss_fn, steps=5, lr=2e-3, seed=0, progress=False).loss

    library_masking = torch.Generator().manual_seed(0)

    def library_loss(model, batch):
        return masked_lm_loss(model, batch, vocab_size=tokenizer.vocab_size,
                              mask_id=tokenizer.mask_id, special_ids=tokenizer.special_ids,
                              generator=library_masking)

    corpus = {"input_ids": corpus_x, "attention_mask": corpus_mask}
    library = run(library_loss, data.row_batches(corpus, seed=0, sampler="python", batch_size=8))
    assert library == run(mlm_loss, lambda step: step)
    rows = data.row_sampler(len(corpus_x), 0, 8)

    def batch_12(step):                                            # lesson 12 gives whole batches
        r = rows(step)
        return {"input_ids": corpus_x[r], "attention_mask": corpus_mask[r]}
    assert library == run(mlm_loss_12, batch_12)


# ------------------------------------------------------------------------------- batches


def test_words_batch_labels_of_and_row_sampler_are_lessons_08_and_09s():
    tokenizer = TOKENIZER

    def bert_inputs(sentences):
        ids = [data.encode_single(tokenizer, tokenizer.encode_words(w), 32) for w in sentences]
        return data.pad_batch(ids, tokenizer.pad_id)                         # (B, T), (B, T)

    def labels_of(examples):
        return torch.tensor([label for _, label in examples])

    def sampler(n_rows, seed, batch_size=32):
        # A function step -> random row indices (a fresh, seeded stream per run).
        rng = random.Random(seed)
        return lambda step: [rng.randrange(n_rows) for _ in range(batch_size)]

    examples = toylang.topic_task(LANG, 50, seed=10)
    sentences = [w for w, _ in examples]
    for ours, theirs in zip(data.words_batch(tokenizer, sentences, 32), bert_inputs(sentences)):
        assert torch.equal(ours, theirs)
    assert torch.equal(data.labels_of(examples), labels_of(examples))
    for seed, size in ((0, 32), (3, 64)):
        ours, theirs = data.row_sampler(50, seed, size), sampler(50, seed, size)
        assert all(ours(step) == theirs(step) for step in range(5))


def test_row_batches_are_the_lessons_teacher_batches_and_pad_batch_of_their_rows():
    ids, labels = encoded(toylang.acceptability_task(LANG, 64, seed=10))
    tensors = labelled_set(ids, labels)
    # Lessons 08 and 09's teacher_loss read rows of the padded set drawn by `sampler`.
    rows, batches = data.row_sampler(64, 0), data.row_batches(tensors, seed=0, sampler="python")
    for step in range(4):
        r, batch = rows(step), batches(step)
        assert all(torch.equal(batch[key], tensors[key][r]) for key in tensors)
    # Lessons 01, 05 and 11 padded each batch's id lists on their own.
    rng, batches = random.Random(3), data.row_batches(tensors, seed=3, sampler="python",
                                                      pad_to="batch")
    for step in range(4):
        r = [rng.randrange(len(ids)) for _ in range(32)]
        input_ids, attention_mask = data.pad_batch([ids[i] for i in r], TOKENIZER.pad_id)
        batch = batches(step)
        assert torch.equal(batch["input_ids"], input_ids)
        assert torch.equal(batch["attention_mask"], attention_mask)
        assert torch.equal(batch["labels"], labels[r])
        assert batch["input_ids"].is_contiguous()
    with pytest.raises(ValueError, match="sampler must be one of"):
        data.row_batches(tensors, seed=0, sampler="numpy")
    with pytest.raises(ValueError, match="same number of rows"):
        data.row_batches({"input_ids": tensors["input_ids"], "labels": labels[:3]}, seed=0,
                         sampler="torch")


# ------------------------------------------------------------------------------- packing


def test_pack_documents_is_lesson_06s_and_the_experiments_pack():
    lang, tokenizer = electra_depth.language()
    LENGTH = electra_depth.LENGTH

    def pack(documents, max_words=LENGTH - 2):
        # Consecutive sentences of a document, as many as fit in max_words, as [CLS] ... [SEP].
        sequences = []
        for document in documents:
            words = []
            for sentence in document:
                if words and len(words) + len(sentence) > max_words:
                    sequences.append(words)
                    words = []
                words = words + sentence[:max_words]
            sequences.append(words)
        return [data.encode_single(tokenizer, tokenizer.encode_words(w), LENGTH) for w in sequences]

    for documents in (lang.documents(3000, (4, 8), seed=1), lang.documents(8, (4, 8), seed=2)):
        assert pack_documents(documents, tokenizer, LENGTH) == pack(documents)
    # A sentence longer than the room is cut, and starts an input of its own, in both.
    long = [[["w"] * 3, ["x"] * 40, ["y"] * 5]]
    assert pack_documents(long, tokenizer, LENGTH) == pack(long)


# ------------------------------------------------------------------------------- fine-tuning


def test_fine_tune_classifier_is_lesson_01s_and_lesson_11s_fine_tune():
    tokenizer, config = TOKENIZER, tiny_config()
    train_ids, train_labels = encoded(toylang.acceptability_task(LANG, 96, seed=10))
    dev_ids, dev_labels = encoded(toylang.acceptability_task(LANG, 64, seed=11))
    dev_input, dev_mask = data.pad_batch(dev_ids, tokenizer.pad_id)

    def fine_tune(pretrained, seed, steps=200):                   # lesson 01's (11's: no None)
        # Accuracy on the dev set after fine-tuning from `pretrained` (or from scratch if None).
        set_seed(seed)
        encoder = copy.deepcopy(pretrained.bert) if pretrained is not None else None
        classifier = BertForSequenceClassification(config, num_classes=2, bert=encoder)
        rng = random.Random(seed)

        def batch(step):
            rows = [rng.randrange(len(train_ids)) for _ in range(32)]
            input_ids, attention_mask = data.pad_batch([train_ids[i] for i in rows],
                                                       tokenizer.pad_id)
            return dict(input_ids=input_ids, attention_mask=attention_mask,
                        labels=train_labels[rows])

        train(classifier, batch, lambda m, b: m(**b).loss, steps=steps, lr=5e-4, warmup=0.1,
              seed=seed, progress=False)
        with torch.no_grad():
            logits = classifier(dev_input, attention_mask=dev_mask).logits
        return (logits.argmax(-1) == dev_labels).float().mean().item(), logits  # (+ the logits)

    built = []

    def classifier_on(pretrained):                                 # as lessons 01 and 11 now
        encoder = copy.deepcopy(pretrained.bert) if pretrained is not None else None

        def build():
            built.append(BertForSequenceClassification(config, num_classes=2, bert=encoder))
            return built[-1]
        return build

    def ours(model, seed, **batches):
        score = finetune.fine_tune_classifier(classifier_on(model), train_set, dev_set, seed=seed,
                                              steps=12, lr=5e-4, **batches)
        with torch.no_grad():
            return score, built[-1](dev_input, attention_mask=dev_mask).logits

    torch.manual_seed(7)
    pretrained = BertForPreTraining(config, nsp=False)            # no pooler: one is added
    train_set, dev_set = labelled_set(train_ids, train_labels), labelled_set(dev_ids, dev_labels)
    for model in (pretrained, None):
        for seed in (0, 1):
            score, logits = ours(model, seed, sampler="python", pad_to="batch")
            their_score, their_logits = fine_tune(model, seed, steps=12)
            assert score == their_score
            assert torch.equal(logits, their_logits)
    # The other batches (torch rows, the set's padding) are another computation.
    _, logits = ours(None, 0, sampler="torch", pad_to="set")
    assert not torch.allclose(logits, fine_tune(None, 0, steps=12)[1])


def test_fine_tune_classifier_is_lesson_05s_fine_tune():
    tokenizer = TOKENIZER
    BATCH, FINETUNE_STEPS, FINETUNE_LR = 16, 10, 1e-3
    train_ids, train_labels = encoded(toylang.acceptability_task(LANG, 96, seed=10))
    dev_ids, dev_labels = encoded(toylang.acceptability_task(LANG, 64, seed=11))
    dev_input, dev_mask = data.pad_batch(dev_ids, tokenizer.pad_id)

    def fine_tune(encoder, seed):
        # Dev accuracy of a copy of `encoder` fine-tuned on the labelled acceptability sentences.
        set_seed(seed)
        model = DistilBertClassifier(copy.deepcopy(encoder), num_classes=2)
        rng = random.Random(seed)

        def batch(step):
            rows = [rng.randrange(len(train_ids)) for _ in range(BATCH)]
            input_ids, attention_mask = data.pad_batch([train_ids[i] for i in rows],
                                                       tokenizer.pad_id)
            return dict(input_ids=input_ids, attention_mask=attention_mask,
                        labels=train_labels[rows])

        train(model, batch, lambda m, b: m(**b).loss, steps=FINETUNE_STEPS, lr=FINETUNE_LR,
              warmup=0.1, seed=seed, progress=False)
        with torch.no_grad():
            return (model(dev_input, attention_mask=dev_mask).logits.argmax(-1)
                    == dev_labels).float().mean().item(), model  # (+ the model)

    torch.manual_seed(3)
    encoder = DistilBertModel(tiny_config(type_vocab_size=0))
    train_set, dev_set = labelled_set(train_ids, train_labels), labelled_set(dev_ids, dev_labels)
    built = []

    def build():
        built.append(DistilBertClassifier(copy.deepcopy(encoder), num_classes=2))
        return built[-1]
    for seed in (0, 1):
        ours = finetune.fine_tune_classifier(
            build, train_set, dev_set, seed=seed, steps=FINETUNE_STEPS, lr=FINETUNE_LR,
            batch_size=BATCH, sampler="python", pad_to="batch")
        their_score, their_model = fine_tune(encoder, seed)
        assert ours == their_score
        ours_state, their_state = built[-1].state_dict(), their_model.state_dict()
        assert all(torch.equal(ours_state[k], their_state[k]) for k in their_state)


def test_fine_tune_is_what_it_was_before_it_shared_fine_tune_classifier():
    def old_fine_tune(config, state, train_set, test_set, *, seed, steps, lr, batch_size=32):
        finetune.check_labelled(train_set=train_set, test_set=test_set)
        set_seed(seed)
        model = ElectraForSequenceClassification(config, 2,
                                                 finetune.encoder_from(config, state, seed))
        n, sampler = len(train_set["labels"]), torch.Generator().manual_seed(seed)

        def next_batch(step):
            rows = torch.randint(n, (batch_size,), generator=sampler)               # (batch,)
            return {key: train_set[key][rows] for key in finetune.LABELLED_KEYS}
        train(model, next_batch, lambda m, batch: m(**batch).loss, steps=steps, lr=lr,
              warmup=0.1, seed=seed, progress=False)
        with torch.no_grad():
            logits = model(test_set["input_ids"],
                           attention_mask=test_set["attention_mask"]).logits      # (N, 2)
        return accuracy(logits, test_set["labels"])

    config = tiny_config(dropout=0.1, attention_dropout=0.1)
    train_set = labelled_set(*encoded(toylang.acceptability_task(LANG, 96, seed=10)))
    test_set = labelled_set(*encoded(toylang.acceptability_task(LANG, 64, seed=11)))
    state = finetune.encoder_from(config, None, seed=4).state_dict()
    for snapshot in (None, state):
        for seed in (0, 1):
            kwargs = dict(seed=seed, steps=10, lr=3e-3)
            assert (finetune.fine_tune(config, snapshot, train_set, test_set, **kwargs)
                    == old_fine_tune(config, snapshot, train_set, test_set, **kwargs))


def test_no_lesson_defines_its_own_copy_of_a_library_function():
    import json
    import re
    from pathlib import Path

    lessons = Path(__file__).resolve().parent.parent / "lessons"
    copies = ("fine_tune", "mlm_loss", "roc_auc", "auc", "pack")
    for notebook in sorted(lessons.glob("[0-9][0-9]_*.ipynb")):
        for cell in json.loads(notebook.read_text())["cells"]:
            if cell["cell_type"] == "code":
                defined = re.findall(r"^\s*def (\w+)\(", "".join(cell["source"]), re.M)
                assert not set(defined) & set(copies), (
                    f"{notebook.name} defines {sorted(set(defined) & set(copies))}: import the "
                    "library's (minibert.finetune, minibert.masking, minibert.measure, "
                    "minibert.formats)")
