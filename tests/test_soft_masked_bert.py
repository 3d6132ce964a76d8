"""Soft-Masked BERT and the spelling-correction toolkit: masking, losses, switches, metrics."""

from __future__ import annotations

import random

import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from minibert import spelling
from minibert.config import BertConfig
from minibert.models.bert import BertForPreTraining
from minibert.models.soft_masked_bert import (
    BertCorrector,
    DetectionNetwork,
    SoftMaskedBert,
    correction_loss,
    detection_loss,
    reverse_padded,
    soft_mask,
)
from minibert.spelling import CharVocab, ConfusionSet

MASK_ID = 4


def tiny_config(**overrides) -> BertConfig:
    return BertConfig(**{"vocab_size": 30, "hidden_size": 16, "num_layers": 1, "num_heads": 2,
                         "max_position": 12, "dropout": 0.0, "attention_dropout": 0.0,
                         **overrides})


def batch():
    ids = torch.tensor([[2, 7, 8, 9, 3, 0], [2, 10, 11, 3, 0, 0]])              # (2, 6)
    mask = (ids != 0).long()
    targets = torch.tensor([[2, 7, 12, 9, 3, 0], [2, 10, 11, 3, 0, 0]])          # one error
    return ids, mask, targets


# ------------------------------------------------------------------ soft masking and losses


def test_soft_mask_endpoints_are_exact():
    e, e_mask = torch.randn(2, 5, 8), torch.randn(2, 5, 8)
    assert torch.equal(soft_mask(torch.zeros(2, 5), e, e_mask), e)
    assert torch.equal(soft_mask(torch.ones(2, 5), e, e_mask), e_mask)
    half = soft_mask(torch.full((2, 5), 0.5), e, e_mask)
    assert torch.allclose(half, (e + e_mask) / 2)


def test_soft_mask_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match=r"\(B, T\)"):
        soft_mask(torch.zeros(2, 5, 1), torch.randn(2, 5, 8), torch.randn(2, 5, 8))


def test_detection_loss_ignores_padding():
    logits = torch.tensor([[2.0, -1.0, 0.5, 100.0]])
    labels = torch.tensor([[1, 0, 0, 0]])
    mask = torch.tensor([[1, 1, 1, 0]])
    changed = logits.clone()
    changed[0, 3] = -100.0                                         # only the pad changes
    assert torch.equal(detection_loss(logits, labels, mask), detection_loss(changed, labels, mask))
    expected = torch.nn.functional.binary_cross_entropy_with_logits(
        logits[0, :3], labels[0, :3].float())
    assert torch.allclose(detection_loss(logits, labels, mask), expected)


def test_correction_loss_includes_unchanged_tokens():
    torch.manual_seed(0)
    logits = torch.randn(1, 4, 6)
    targets = torch.tensor([[1, 2, 3, 0]])
    mask = torch.tensor([[1, 1, 1, 0]])
    expected = torch.nn.functional.cross_entropy(logits[0, :3], targets[0, :3])
    assert torch.allclose(correction_loss(logits, targets, mask), expected)


def test_total_loss_weights_correction_by_0_8():
    torch.manual_seed(0)
    model = SoftMaskedBert(tiny_config(), MASK_ID)
    ids, mask, targets = batch()
    out = model(ids, attention_mask=mask, target_ids=targets)
    assert torch.allclose(out.loss, 0.8 * out.correction_loss + 0.2 * out.detection_loss)
    out.loss.backward()
    assert model.detector.forward_gru.weight_ih_l0.grad.abs().sum() > 0
    assert model.detector.backward_gru.weight_ih_l0.grad.abs().sum() > 0


def test_detector_equals_a_packed_bidirectional_gru():
    torch.manual_seed(0)
    detector = DetectionNetwork(8, 3)
    bigru = torch.nn.GRU(8, 3, batch_first=True, bidirectional=True)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(bigru, f"{name}_l0").copy_(getattr(detector.forward_gru, f"{name}_l0"))
            getattr(bigru, f"{name}_l0_reverse").copy_(getattr(detector.backward_gru, f"{name}_l0"))
    x = torch.randn(3, 6, 8)                                                    # (B, T, H)
    mask = torch.tensor([[1] * 6, [1] * 4 + [0] * 2, [1] * 2 + [0] * 4])
    packed = pack_padded_sequence(x, mask.sum(1), batch_first=True, enforce_sorted=False)
    states, _ = pad_packed_sequence(bigru(packed)[0], batch_first=True, total_length=6)
    expected = detector.out(states).squeeze(-1)                                 # (B, T)
    got = detector(x, mask)
    real = mask.bool()
    assert torch.allclose(got[real], expected[real], atol=1e-6)
    x2 = x.clone()
    x2[~real] = 100.0                                                           # change the pads
    assert torch.allclose(detector(x2, mask)[real], got[real], atol=1e-6)


def test_reverse_padded_is_its_own_inverse():
    x = torch.arange(12.0).reshape(2, 6, 1)
    lengths = torch.tensor([6, 3])
    flipped = reverse_padded(x, lengths)
    assert flipped[0, :, 0].tolist() == [5, 4, 3, 2, 1, 0]
    assert flipped[1, :, 0].tolist() == [8, 7, 6, 9, 10, 11]
    assert torch.equal(reverse_padded(flipped, lengths), x)


# ------------------------------------------------------------------ the model's switches


def test_residual_adds_the_original_embedding():
    torch.manual_seed(0)
    with_res = SoftMaskedBert(tiny_config(), MASK_ID).eval()
    without = SoftMaskedBert(tiny_config(), MASK_ID, residual=False).eval()
    without.load_state_dict(with_res.state_dict())
    ids, mask, _ = batch()
    e = with_res.bert.encoder.embeddings(ids)                                   # (B, T, H)
    h = {}
    with_res.mlm.register_forward_pre_hook(lambda m, args: h.__setitem__("res", args[0]))
    without.mlm.register_forward_pre_hook(lambda m, args: h.__setitem__("plain", args[0]))
    with torch.no_grad():
        with_res(ids, attention_mask=mask)
        without(ids, attention_mask=mask)
    assert torch.allclose(h["res"], h["plain"] + e, atol=1e-6)


def test_hard_mask_replaces_confident_positions_by_the_mask_embedding():
    torch.manual_seed(0)
    model = SoftMaskedBert(tiny_config(), MASK_ID, hard_mask=True).eval()
    ids, mask, _ = batch()
    with torch.no_grad():   # force p > 0.5 at every position: the whole input becomes [MASK]
        model.detector.out.bias.fill_(10.0)
        model.detector.out.weight.zero_()
    seen = {}
    model.bert.encoder.layers[0].register_forward_pre_hook(
        lambda m, args: seen.__setitem__("x", args[0]))
    with torch.no_grad():
        model(ids, attention_mask=mask)
        e_mask = model.bert.encoder.embeddings(torch.full_like(ids, MASK_ID))
    assert torch.equal(seen["x"], e_mask)
    with torch.no_grad():   # p < 0.5 everywhere: the input goes through unchanged
        model.detector.out.bias.fill_(-10.0)
        model(ids, attention_mask=mask)
        assert torch.equal(seen["x"], model.bert.encoder.embeddings(ids))


def test_padding_does_not_change_predictions():
    torch.manual_seed(0)
    model = SoftMaskedBert(tiny_config(), MASK_ID).eval()
    short = torch.tensor([[2, 7, 8, 3]])
    padded = torch.tensor([[2, 7, 8, 3, 0, 0]])
    with torch.no_grad():
        a = model(short).logits
        b = model(padded).logits[:, :4]
    assert torch.allclose(a, b, atol=1e-5)


def test_baseline_and_pretrained_weights():
    torch.manual_seed(0)
    config = tiny_config()
    mlm = BertForPreTraining(config, nsp=False)
    for model in (BertCorrector(config, MASK_ID), SoftMaskedBert(config, MASK_ID)):
        model.load_pretrained(mlm)
        assert torch.equal(model.bert.word_embeddings.weight, mlm.bert.word_embeddings.weight)
        assert model.mlm.word_embeddings is model.bert.word_embeddings      # still tied
        ids, mask, targets = batch()
        out = model(ids, attention_mask=mask, target_ids=targets)
        assert out.logits.shape == (2, 6, config.vocab_size)
        assert model.predict(ids, mask).shape == (2, 6)


def test_length_mismatch_names_the_fix():
    model = BertCorrector(tiny_config(), MASK_ID)
    ids, mask, _ = batch()
    with pytest.raises(ValueError, match="same length"):
        model(ids, attention_mask=mask, target_ids=ids[:, :4])
    with pytest.raises(ValueError, match="same length"):
        SoftMaskedBert(tiny_config(), MASK_ID)(ids, attention_mask=mask, target_ids=ids[:, :4])


def test_inputs_embeds_equal_the_embedding_path():
    torch.manual_seed(0)
    model = BertCorrector(tiny_config(), MASK_ID).eval()
    ids, mask, _ = batch()
    with torch.no_grad():
        direct = model.bert(ids, attention_mask=mask).last_hidden_state
        e = model.bert.encoder.embeddings(ids)
        via = model.bert(None, attention_mask=mask, inputs_embeds=e).last_hidden_state
    assert torch.equal(direct, via)
    with pytest.raises(ValueError, match="not both"):
        model.bert(ids, inputs_embeds=e)


# ------------------------------------------------------------------ metrics


def test_sentence_and_char_metrics_on_hand_made_examples():
    sources = ["今天天汽好", "我们去学校", "他很高心", "你好吗"]
    targets = ["今天天气好", "我们去学校", "他很高兴", "你好吗"]
    predictions = [
        "今天天气好",   # error found and corrected
        "我们去学笑",   # a false alarm on a clean sentence
        "他很高星",     # error found, wrongly corrected
        "你好吗",       # clean, left alone
    ]
    s = spelling.sentence_metrics(sources, predictions, targets)
    # detection: sentences 0, 2 right with errors; 3 right and clean; changed 3; erroneous 2
    assert s["d_acc"] == pytest.approx(3 / 4)
    assert s["d_p"] == pytest.approx(2 / 3) and s["d_r"] == pytest.approx(1.0)
    assert s["d_f1"] == pytest.approx(0.8)
    # correction: only sentence 0 among those with errors; sentence 3 right
    assert s["c_acc"] == pytest.approx(2 / 4)
    assert s["c_p"] == pytest.approx(1 / 3) and s["c_r"] == pytest.approx(1 / 2)
    assert s["c_f1"] == pytest.approx(0.4)
    c = spelling.char_metrics(sources, predictions, targets)
    # 3 changed positions, 2 gold errors, 2 detected, 1 corrected
    assert c["d_p"] == pytest.approx(2 / 3) and c["d_r"] == pytest.approx(1.0)
    assert c["c_p"] == pytest.approx(1 / 3) and c["c_r"] == pytest.approx(1 / 2)


def test_copying_the_input_scores_zero_but_is_accurate_on_clean_sentences():
    sources, targets = ["天汽", "学校"], ["天气", "学校"]
    s = spelling.sentence_metrics(sources, sources, targets)
    assert s["c_acc"] == 0.5 and s["c_p"] == 0.0 and s["c_r"] == 0.0 and s["c_f1"] == 0.0


def test_wrong_position_counts_against_detection():
    s = spelling.sentence_metrics(["天汽好"], ["大汽好"], ["天气好"])
    assert s["d_p"] == 0.0 and s["d_r"] == 0.0 and s["d_acc"] == 0.0


def test_metrics_reject_unequal_lengths():
    with pytest.raises(ValueError, match="same-length substitution"):
        spelling.sentence_metrics(["天汽好"], ["天气"], ["天气好"])
    with pytest.raises(ValueError, match="one of each"):
        spelling.char_metrics(["a"], [], ["a"])


# ------------------------------------------------------------------ data


CONFUSION = ConfusionSet({"气": ("汽", "器"), "校": ("笑",), "心": ("新", "星")})


def test_injected_errors_keep_length_and_come_from_the_confusion_set():
    sentence = "今天天气好，我们去学校，很开心"
    for seed in range(20):
        for n in (1, 2):
            noisy = spelling.inject_errors(sentence, CONFUSION, random.Random(seed), n)
            assert len(noisy) == len(sentence)
            diffs = [(a, b) for a, b in zip(sentence, noisy) if a != b]
            assert len(diffs) == n
            assert all(CONFUSION.confusable(a, b) for a, b in diffs)


def test_injection_is_seeded():
    sentences = ["今天天气好", "我们去学校", "很开心", "没有可换的字"]
    first = spelling.make_pairs(sentences, CONFUSION, seed=3, clean_fraction=0.3)
    assert first == spelling.make_pairs(sentences, CONFUSION, seed=3, clean_fraction=0.3)
    assert all(len(s) == len(t) for s, t in first)
    assert first[3] == ("没有可换的字", "没有可换的字")     # nothing confusable: left alone


def test_sighan_loader_drops_unequal_pairs(tmp_path):
    path = tmp_path / "sighan.tsv"
    path.write_text("天汽好\t天气好\n去超市\t去超级市场\n我们\t我们\n", encoding="utf-8")
    pairs, dropped = spelling.load_sighan2015(path)
    assert pairs == [("天汽好", "天气好"), ("我们", "我们")] and dropped == 1


def test_confusion_file_parsing_and_vocab_filter(tmp_path):
    path = tmp_path / "same_pinyin.txt"
    path.write_text("#汉字\t同音同调\t同音异调\n气\t汽器\t起七\n校\t笑\t\n", encoding="utf-8")
    any_tone = spelling.load_confusion_set(tone="any", path=path)
    assert any_tone["气"] == tuple(sorted("汽器起七")) and any_tone["校"] == ("笑",)
    same = spelling.load_confusion_set(["气", "汽", "校"], tone="same", path=path)
    assert same["气"] == ("汽",) and "校" not in same


def test_vocab_round_trip_keeps_unknown_characters():
    vocab = CharVocab.build(["天气好", "天天"], size=3)
    assert vocab.itos[5:] == ["天", "好", "气"]
    ids = vocab.encode("天晴好")
    assert ids[0] == vocab.cls_id and ids[-1] == vocab.sep_id and ids[2] == vocab.unk_id
    assert vocab.decode(ids[1:-1], "天晴好") == "天晴好"
    assert vocab.decode([vocab.stoi["气"], vocab.unk_id, vocab.pad_id], "天晴好") == "气晴好"


def test_chunks_join_back_and_respect_the_limit():
    text = "我今天很高兴，因为天气很好。我们去公园玩了一整天，晚上回家吃饭"
    pieces = spelling.chunks(text, 10)
    assert "".join(pieces) == text
    assert all(1 <= len(p) <= 10 for p in pieces)


def test_missing_package_names_make_setup():
    with pytest.raises(FileNotFoundError, match="make setup"):
        spelling.package_file("no_such_package_here", "data.txt")


# ------------------------------------------------------------------ the lesson's graders


def test_graders_accept_the_library_and_explain_slips(monkeypatch):
    from minibert import check
    from minibert.models.soft_masked_bert import soft_mask as library_soft_mask

    monkeypatch.setattr(check, "_FAILED_ATTEMPTS", {})
    assert check.grade("soft_mask", library_soft_mask, print=False)
    swapped = check.grade("soft_mask", lambda p, e, m: library_soft_mask(p, m, e), print=False)
    assert not swapped and "wrong values" in swapped.message and "check.hint" in swapped.message
    assert "p = 1" in check.hint("soft_mask", print=False)   # the hint, for who asks for it
    no_axis = check.grade("soft_mask", lambda p, e, m: p * m + (1 - p) * e, print=False)
    assert not no_axis and "unsqueeze(-1)" in no_axis.message

    def detection(sources, predictions, targets):
        s = spelling.sentence_metrics(sources, predictions, targets)
        return s["d_acc"], s["d_p"], s["d_r"], s["d_f1"]

    assert check.grade("sentence_detection", detection, print=False)

    def letters_count(sources, predictions, targets):     # detection judged like correction
        s = spelling.sentence_metrics(sources, predictions, targets)
        return s["c_acc"], s["c_p"], s["c_r"], s["c_f1"]

    result = check.grade("sentence_detection", letters_count, print=False)
    assert not result and "`accuracy` (item 0 of the tuple)" in result.message


def test_given_detection_probs_replace_the_detectors():
    torch.manual_seed(0)
    model = SoftMaskedBert(tiny_config(), MASK_ID).eval()
    ids, mask, targets = batch()
    gold = (ids != targets).float()                                             # (B, T)
    seen = {}
    model.bert.encoder.layers[0].register_forward_pre_hook(
        lambda m, args: seen.__setitem__("x", args[0]))
    with torch.no_grad():
        out = model(ids, attention_mask=mask, detection_probs=gold)
        e = model.bert.encoder.embeddings(ids)
        e_mask = model.bert.encoder.embeddings(torch.full_like(ids, MASK_ID))
    assert torch.allclose(seen["x"], soft_mask(gold, e, e_mask))
    assert not torch.equal(out.detection_probs, gold)                   # the detector's own p
    with pytest.raises(ValueError, match="one error probability per character"):
        model(ids, attention_mask=mask, detection_probs=gold[:, :3])


def test_batches_and_correct_keep_every_character():
    vocab = CharVocab.build(["今天天气好", "我们去学校"], size=20)
    pairs = [("今天天汽好", "今天天气好"), ("我们去学校", "我们去学校"), ("天气", "天气")]
    batches = spelling.batches_by_length(vocab, pairs, batch_size=2, seed=0)
    assert sorted(len(b["input_ids"]) for b in batches) == [1, 2]
    for b in batches:
        assert b["input_ids"].shape == b["target_ids"].shape == b["attention_mask"].shape

    class Copy:                                   # a "model" that predicts its input
        def predict(self, input_ids, attention_mask):
            return input_ids

    texts = ["今天天汽好，我们去学校", "晴"]          # 汽 and 晴 are not in the vocabulary
    assert spelling.correct(Copy(), vocab, texts, max_len=4) == texts
    with pytest.raises(ValueError, match="same-length"):
        spelling.correction_batch(vocab, [("天汽", "天气好")])
