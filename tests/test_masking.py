"""BERT masking: 15% selected, 80/10/10, specials untouched, labels, determinism."""

import pytest
import torch

from minibert.masking import IGNORE_INDEX, mask_tokens, masking_stats

VOCAB, PAD, UNK, CLS, SEP, MASK = 100, 0, 1, 2, 3, 4
SPECIAL = [PAD, UNK, CLS, SEP, MASK]


def make_batch(batch_size=64, seq_len=128, seed=0):
    """[CLS] random ordinary tokens [SEP] [PAD]..., with a different length per row."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, VOCAB, (batch_size, seq_len), generator=g)  # (B, T)
    lengths = torch.randint(10, seq_len + 1, (batch_size,), generator=g)  # (B,)
    for row, n in enumerate(lengths.tolist()):
        ids[row, 0], ids[row, n - 1] = CLS, SEP
        ids[row, n:] = PAD
    return ids


def run(ids, seed, **kwargs):
    g = torch.Generator().manual_seed(seed)
    return mask_tokens(ids, vocab_size=VOCAB, mask_id=MASK, special_ids=SPECIAL, generator=g,
                       **kwargs)


@pytest.mark.parametrize("exact", [True, False])
def test_fractions_over_many_draws(exact):
    ids = make_batch()
    totals = {"cand": 0, "sel": 0, "mask": 0, "rand": 0, "keep": 0}
    for seed in range(10):
        masked, labels = run(ids, seed, exact=exact)
        stats = masking_stats(ids, masked, labels, mask_id=MASK, special_ids=SPECIAL)
        totals["cand"] += stats.n_candidates
        totals["sel"] += stats.n_selected
        for key, frac in (("mask", stats.mask_frac), ("rand", stats.random_frac),
                          ("keep", stats.keep_frac)):
            totals[key] += frac * stats.n_selected
    assert abs(totals["sel"] / totals["cand"] - 0.15) < 0.01
    assert abs(totals["mask"] / totals["sel"] - 0.80) < 0.02
    assert abs(totals["rand"] / totals["sel"] - 0.10) < 0.02
    assert abs(totals["keep"] / totals["sel"] - 0.10) < 0.02


def test_exact_count_per_sequence():
    ids = make_batch()
    _, labels = run(ids, seed=1, exact=True)
    n_candidates = (~torch.isin(ids, torch.tensor(SPECIAL))).sum(dim=1)
    for n, row in zip(n_candidates.tolist(), labels):
        assert int((row != IGNORE_INDEX).sum()) == max(1, round(0.15 * n))


def test_specials_never_selected_and_labels_exact():
    ids = make_batch()
    for exact in (True, False):
        masked, labels = run(ids, seed=2, exact=exact)
        special = torch.isin(ids, torch.tensor(SPECIAL))
        selected = labels != IGNORE_INDEX
        assert not (selected & special).any()  # PAD, CLS, SEP never chosen
        assert torch.equal(masked[special], ids[special])  # and never changed
        assert torch.equal(labels[selected], ids[selected])  # the original token
        assert torch.equal(masked[~selected], ids[~selected])  # unselected untouched
        assert (labels[~selected] == IGNORE_INDEX).all()


def test_random_replacements_are_ordinary_tokens():
    ids = make_batch()
    masked, labels = run(ids, seed=3)
    changed = (labels != IGNORE_INDEX) & (masked != MASK) & (masked != ids)
    assert changed.any()
    assert not torch.isin(masked[changed], torch.tensor(SPECIAL)).any()
    masked, labels = run(ids, seed=3, random_ids=[7, 8])
    changed = (labels != IGNORE_INDEX) & (masked != MASK) & (masked != ids)
    assert set(masked[changed].tolist()) <= {7, 8}


def test_deterministic_given_seed():
    ids = make_batch()
    a, la = run(ids, seed=4)
    b, lb = run(ids, seed=4)
    c, _ = run(ids, seed=5)
    assert torch.equal(a, b) and torch.equal(la, lb)
    assert not torch.equal(a, c)
    assert torch.equal(ids, make_batch())  # the input is not modified


def test_one_sequence_and_all_mask_ablation():
    ids = make_batch(batch_size=1)[0]  # (T,)
    masked, labels = run(ids, seed=6, mask_frac=1.0, random_frac=0.0)
    assert masked.shape == labels.shape == ids.shape
    selected = labels != IGNORE_INDEX
    assert (masked[selected] == MASK).all()


def test_rows_without_candidates_select_nothing():
    ids = torch.tensor([[CLS, SEP, PAD, PAD], [CLS, 9, SEP, PAD]])
    _, labels = run(ids, seed=7)
    assert (labels[0] == IGNORE_INDEX).all()
    assert labels[1].tolist() == [IGNORE_INDEX, 9, IGNORE_INDEX, IGNORE_INDEX]  # max(1, ...)


@pytest.mark.parametrize("kwargs, message", [
    (dict(mask_prob=0.0), "mask_prob"),
    (dict(mask_prob=1.5), "mask_prob"),
    (dict(mask_id=VOCAB), "mask_id"),
    (dict(vocab_size=50), "vocab_size"),
    (dict(random_ids=[CLS]), "special"),
    (dict(mask_frac=0.95, random_frac=0.1), "sum"),
    (dict(generator=None), "generator"),
])
def test_bad_arguments_are_explained(kwargs, message):
    args = dict(vocab_size=VOCAB, mask_id=MASK, special_ids=SPECIAL,
                generator=torch.Generator().manual_seed(0))
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        mask_tokens(make_batch(4, 16), **args)


def test_bad_input_ids_are_explained():
    g = torch.Generator().manual_seed(0)
    with pytest.raises(ValueError, match="LongTensor"):
        mask_tokens(torch.zeros(2, 3), vocab_size=VOCAB, mask_id=MASK, special_ids=SPECIAL,
                    generator=g)
    with pytest.raises(ValueError, match="shape"):
        mask_tokens(torch.zeros(2, 3, 4, dtype=torch.long), vocab_size=VOCAB, mask_id=MASK,
                    special_ids=SPECIAL, generator=g)
