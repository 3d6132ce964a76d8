"""ELECTRA: corruption and labels, shared embeddings, the losses, sampling, compute counts."""

from __future__ import annotations

import pytest
import torch

from minibert.corruption import (
    electra_mask,
    originals_from_labels,
    replace_tokens,
    sample_tokens,
    sample_tokens_reference,
)
from minibert.masking import IGNORE_INDEX
from minibert.measure import count_parameters
from minibert.models.electra import (
    ElectraForPreTraining,
    ElectraForSequenceClassification,
    discriminator_loss,
    electra_configs,
    electra_step_flops,
    encoder_flops,
    mlm_step_flops,
)

V = 60
SPECIAL = [0, 1, 2, 3, 4]   # [PAD] [UNK] [CLS] [SEP] [MASK]


def configs(fraction=0.25):
    return electra_configs("bert-nano", generator_fraction=fraction, embedding_size=32,
                           vocab_size=V, max_position=16, dropout=0.0, attention_dropout=0.0)


def batch(seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, V, (4, 12), generator=g)
    ids[:, 0], ids[:, -1] = 2, 3
    mask = torch.ones_like(ids)
    ids[1, 8:], mask[1, 8:] = 0, 0
    masked, labels = electra_mask(ids, vocab_size=V, mask_id=4, special_ids=SPECIAL, generator=g)
    return ids, masked, labels, mask


def test_a_sample_equal_to_the_original_is_labelled_real():
    ids = torch.tensor([[2, 10, 11, 12, 3]])
    selected = torch.tensor([[False, True, True, True, False]])
    sampled = torch.tensor([[2, 10, 30, 12, 3]])      # positions 1 and 3 guessed right
    corrupted, is_replaced = replace_tokens(ids, selected, sampled)
    assert corrupted.tolist() == [[2, 10, 30, 12, 3]]
    assert is_replaced.tolist() == [[0.0, 0.0, 1.0, 0.0, 0.0]]
    assert is_replaced.dtype == torch.float32


def test_unselected_positions_keep_their_token_whatever_was_sampled():
    ids = torch.tensor([[2, 10, 11, 3]])
    selected = torch.tensor([[False, False, True, False]])
    corrupted, is_replaced = replace_tokens(ids, selected, torch.full_like(ids, 40))
    assert corrupted.tolist() == [[2, 10, 40, 3]] and is_replaced.sum() == 1


def test_replace_tokens_rejects_mismatched_shapes_and_non_bool_masks():
    ids = torch.zeros(2, 5, dtype=torch.long)
    with pytest.raises(ValueError, match="same shape"):
        replace_tokens(ids, ids.bool(), torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match="bool"):
        replace_tokens(ids, ids, ids)


def test_electra_mask_is_85_percent_mask_15_percent_kept_no_random():
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(5, V, (200, 40), generator=g)
    masked, labels = electra_mask(ids, vocab_size=V, mask_id=4, special_ids=SPECIAL, generator=g)
    selected = labels != IGNORE_INDEX
    as_mask = (masked[selected] == 4).float().mean().item()
    kept = (masked[selected] == ids[selected]).float().mean().item()
    assert abs(selected.float().mean().item() - 0.15) < 0.01
    assert abs(as_mask - 0.85) < 0.02 and abs(kept - 0.15) < 0.02
    assert as_mask + kept == pytest.approx(1.0)          # nothing was randomised
    assert torch.equal(originals_from_labels(masked, labels), ids)


def test_gumbel_sampling_matches_the_softmax_and_is_seeded():
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]]).expand(20000, 4)
    expected = torch.softmax(logits[0], -1)
    for sampler in (sample_tokens, sample_tokens_reference):
        draws = sampler(logits, torch.Generator().manual_seed(0))
        freq = torch.bincount(draws, minlength=4).float() / len(draws)
        assert torch.allclose(freq, expected, atol=0.01), sampler.__name__
    a = sample_tokens(logits, torch.Generator().manual_seed(3))
    b = sample_tokens(logits, torch.Generator().manual_seed(3))
    assert torch.equal(a, b)
    assert not torch.equal(a, logits.argmax(-1))          # a sample, not the argmax


def test_generator_and_discriminator_share_the_embedding_tables_not_the_projection():
    model = ElectraForPreTraining(*configs())
    gen, disc = model.generator.encoder.embeddings, model.electra.encoder.embeddings
    for name in ("word", "position", "segment", "norm"):
        assert getattr(gen, name) is getattr(disc, name)
    assert gen.project.weight.shape == (16, 32) and disc.project.weight.shape == (64, 32)
    assert model.generator_head.word_embeddings is disc.word
    separate = count_parameters(model.generator) + count_parameters(model.electra)
    shared = sum(p.numel() for p in disc.word.parameters()) + \
        sum(p.numel() for n in ("position", "segment", "norm")
            for p in getattr(disc, n).parameters())
    assert count_parameters(model) == separate - shared + count_parameters(
        model.generator_head) - V * 32 + count_parameters(model.discriminator_head)


def test_generator_is_a_quarter_of_the_discriminator():
    disc, gen = configs()
    assert (gen.hidden_size, gen.intermediate_size, gen.num_layers) == (16, 64, disc.num_layers)
    assert gen.embedding_size == disc.embedding_size == 32
    with pytest.raises(ValueError, match="generator_fraction"):
        configs(0.0)


def test_configs_that_cannot_share_embeddings_are_rejected():
    disc, gen = configs()
    with pytest.raises(ValueError, match="embedding_size"):
        ElectraForPreTraining(disc, gen.replace(embedding_size=16))


def test_loss_is_mlm_plus_50_times_the_discriminator_loss_over_non_pad_tokens():
    torch.manual_seed(0)
    model = ElectraForPreTraining(*configs())
    ids, masked, labels, mask = batch()
    out = model(masked, mlm_labels=labels, attention_mask=mask,
                generator=torch.Generator().manual_seed(0))
    assert torch.allclose(out.loss, out.mlm_loss + 50 * out.disc_loss)
    real = mask.bool()
    per_token = torch.nn.functional.binary_cross_entropy_with_logits(
        out.disc_logits[real], out.is_replaced[real])
    assert torch.allclose(out.disc_loss, per_token)
    # labels follow the samples: replaced exactly where the discriminator input differs
    assert torch.equal(out.is_replaced.bool(), out.corrupted_ids != ids)
    selected = labels != IGNORE_INDEX
    assert torch.equal(out.corrupted_ids[selected], out.sampled_ids)
    assert torch.equal(out.corrupted_ids[~selected], ids[~selected])


def test_the_discriminator_labels_can_come_from_the_students_function():
    calls = []

    def my_labels(input_ids, selected, sampled_ids):
        calls.append(tuple(input_ids.shape))
        return replace_tokens(input_ids, selected, sampled_ids)

    ids, masked, labels, mask = batch()
    outs = []
    for replace in (None, my_labels):
        torch.manual_seed(0)
        model = ElectraForPreTraining(*configs(), replace=replace)
        outs.append(model(masked, mlm_labels=labels, attention_mask=mask,
                          generator=torch.Generator().manual_seed(0)))
    assert calls == [tuple(ids.shape)]
    assert torch.equal(outs[0].is_replaced, outs[1].is_replaced)
    assert torch.allclose(outs[0].loss, outs[1].loss)


def test_electra_15_percent_scores_the_discriminator_on_the_selected_positions_only():
    ids, masked, labels, mask = batch()
    outputs = {}
    for where in ("all", "selected"):
        torch.manual_seed(0)
        model = ElectraForPreTraining(*configs(), disc_positions=where)
        outputs[where] = model(masked, mlm_labels=labels, attention_mask=mask,
                               generator=torch.Generator().manual_seed(0))
    full, fifteen = outputs["all"], outputs["selected"]
    # the same weights and samples: only the positions the loss is averaged over differ
    assert torch.equal(full.disc_logits, fifteen.disc_logits)
    selected = labels != IGNORE_INDEX
    expected = torch.nn.functional.binary_cross_entropy_with_logits(
        fifteen.disc_logits[selected], fifteen.is_replaced[selected])
    assert torch.allclose(fifteen.disc_loss, expected)
    assert not torch.allclose(fifteen.disc_loss, full.disc_loss)
    assert torch.allclose(fifteen.loss, fifteen.mlm_loss + 50 * fifteen.disc_loss)
    with pytest.raises(ValueError, match="'all'.*'selected'"):
        ElectraForPreTraining(*configs(), disc_positions="masked")


def test_no_gradient_reaches_the_generator_through_the_sample():
    torch.manual_seed(0)
    model = ElectraForPreTraining(*configs())
    ids, masked, labels, mask = batch()
    out = model(masked, mlm_labels=labels, attention_mask=mask,
                generator=torch.Generator().manual_seed(0))
    out.disc_loss.backward()
    layer = model.generator.encoder.layers[0].feed_forward.up.weight
    assert layer.grad is None or layer.grad.abs().sum() == 0
    assert model.generator_head.dense.weight.grad is None
    assert model.electra.encoder.layers[0].feed_forward.up.weight.grad.abs().sum() > 0


def test_discriminator_loss_ignores_padding():
    logits = torch.tensor([[3.0, -3.0, 100.0]])
    labels = torch.tensor([[1.0, 0.0, 0.0]])
    loss = discriminator_loss(logits, labels, torch.tensor([[1, 1, 0]]))
    expected = torch.nn.functional.softplus(torch.tensor(-3.0))
    assert torch.allclose(loss, expected)


def test_flop_counts():
    disc, gen = configs()
    assert encoder_flops(disc, 1, 1) == 2 * 32 * 64 + 2 * (2 * (4 * 64 * 64 + 2 * 64 * 256)
                                                           + 2 * 2 * 64)
    mlm = mlm_step_flops(disc, 32, 32, 100)
    electra = electra_step_flops(disc, gen, 32, 32, 100)
    assert 1.0 < electra / mlm < 1.3          # a quarter-size generator adds ~10%
    big = electra_step_flops(*configs(1.0), 32, 32, 100)
    assert big / mlm > 2.0                    # a full-size generator more than doubles it


def test_mean_pooled_classifier_ignores_padding():
    torch.manual_seed(0)
    disc, _ = configs()
    clf = ElectraForSequenceClassification(disc, 2).eval()
    ids = torch.tensor([[2, 10, 11, 3, 0, 0]])
    mask = torch.tensor([[1, 1, 1, 1, 0, 0]])
    a = clf(ids, attention_mask=mask).logits
    b = clf(ids[:, :4], attention_mask=mask[:, :4]).logits
    assert torch.allclose(a, b, atol=1e-6)
    out = clf(ids, attention_mask=mask, labels=torch.tensor([1]))
    assert out.loss is not None and out.logits.shape == (1, 2)
