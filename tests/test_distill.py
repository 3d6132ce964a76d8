"""Distillation losses, the DistilBERT student, its teacher initialisation and the T slider."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from minibert import check  # noqa: E402
from minibert.config import BertConfig  # noqa: E402
from minibert.course.widgets import show_temperature, temperature_explorer  # noqa: E402
from minibert.distill import (  # noqa: E402
    cosine_hidden_loss,
    kd_loss,
    kd_loss_reference,
    log_softmax_with_temperature,
    soft_cross_entropy,
    softmax_with_temperature,
    triple_loss,
)
from minibert.models.bert import BertForPreTraining  # noqa: E402
from minibert.models.distilbert import (  # noqa: E402
    DistilBertClassifier,
    DistilBertForMaskedLM,
    DistilBertModel,
    distilbert_config,
    every_other_layer,
    init_from_teacher,
)


def logits(*shape, seed=0, scale=3.0):
    return scale * torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# ------------------------------------------------------------------ temperature softmax


@pytest.mark.parametrize("temperature", [0.5, 1.0, 2.0, 8.0])
def test_softmax_with_temperature_is_softmax_of_scaled_logits(temperature):
    z = logits(4, 7)
    expected = F.softmax(z / temperature, dim=-1)
    assert torch.allclose(softmax_with_temperature(z, temperature), expected, atol=1e-7)
    assert torch.allclose(log_softmax_with_temperature(z, temperature), expected.log(), atol=1e-5)


def test_higher_temperature_flattens_the_distribution():
    z = logits(1, 10)
    entropies = []
    for temperature in (0.5, 1.0, 2.0, 4.0, 16.0):
        p = softmax_with_temperature(z, temperature)
        entropies.append(-(p * p.log()).sum().item())
    assert entropies == sorted(entropies)
    assert torch.allclose(softmax_with_temperature(z, 1e4), torch.full((1, 10), 0.1), atol=1e-3)


def test_softmax_does_not_overflow_on_large_logits():
    p = softmax_with_temperature(torch.tensor([[1000.0, 999.0, 0.0]]), 1.0)
    assert torch.isfinite(p).all() and abs(p.sum().item() - 1) < 1e-6


def test_temperature_must_be_positive():
    with pytest.raises(ValueError, match="temperature must be a finite number > 0"):
        softmax_with_temperature(logits(2, 3), 0.0)


# ------------------------------------------------------------------ Hinton's loss


@pytest.mark.parametrize("temperature", [1.0, 2.0, 5.0])
def test_kd_loss_is_per_example_kl_summed_over_classes_averaged_over_batch(temperature):
    student, teacher = logits(6, 9, seed=1), logits(6, 9, seed=2)
    p = F.softmax(teacher / temperature, -1)
    log_q = F.log_softmax(student / temperature, -1)
    per_example = [(p[i] * (p[i].log() - log_q[i])).sum() for i in range(6)]
    expected = torch.stack(per_example).mean() * temperature**2
    assert torch.allclose(kd_loss(student, teacher, temperature), expected, atol=1e-6)
    batchmean = F.kl_div(log_q, p, reduction="batchmean") * temperature**2
    assert torch.allclose(kd_loss(student, teacher, temperature), batchmean, atol=1e-6)
    assert torch.allclose(kd_loss_reference(student, teacher, temperature), batchmean, atol=1e-6)


def test_kd_loss_with_leading_positions_averages_every_row():
    student, teacher = logits(2, 3, 5, seed=1), logits(2, 3, 5, seed=2)
    flat = kd_loss(student.reshape(6, 5), teacher.reshape(6, 5), 2.0)
    assert torch.allclose(kd_loss(student, teacher, 2.0), flat)
    assert torch.allclose(kd_loss_reference(student, teacher, 2.0), flat, atol=1e-6)


def test_kd_loss_is_zero_when_student_matches_teacher_and_ignores_teacher_gradient():
    teacher = logits(3, 4).requires_grad_()
    assert kd_loss(teacher.detach().clone(), teacher, 3.0).abs().item() < 1e-6
    student = logits(3, 4, seed=5).requires_grad_()
    kd_loss(student, teacher, 2.0).backward()
    assert teacher.grad is None and student.grad is not None


def _grad_norm(temperature, scale_by_t2):
    # Logits centred per row, as in Hinton et al.'s high-temperature analysis.
    student = logits(32, 50, seed=3, scale=1.0)
    teacher = logits(32, 50, seed=4, scale=1.0)
    student = (student - student.mean(-1, keepdim=True)).requires_grad_()
    teacher = teacher - teacher.mean(-1, keepdim=True)
    loss = kd_loss(student, teacher, temperature)
    if not scale_by_t2:
        loss = loss / temperature**2
    (grad,) = torch.autograd.grad(loss, student)
    return grad.norm().item()


def test_t_squared_keeps_the_gradient_scale_comparable_across_temperatures():
    temperatures = (1.0, 2.0, 4.0, 8.0)
    with_t2 = [_grad_norm(t, True) for t in temperatures]
    without = [_grad_norm(t, False) for t in temperatures]
    # Without T^2 the gradient shrinks about like 1/T^2: 64x from T=1 to T=8.
    assert without[0] / without[-1] > 30
    # With T^2 it stays within a small factor at every temperature.
    assert max(with_t2) / min(with_t2) < 2.5
    # At high T the scaled gradient tends to a constant: (z - v) / N, independent of T.
    assert abs(with_t2[-1] / with_t2[-2] - 1) < 0.05


def test_temperature_one_recovers_the_ordinary_soft_cross_entropy():
    student, teacher = logits(5, 8, seed=6).requires_grad_(), logits(5, 8, seed=7)
    p = F.softmax(teacher, -1)
    ordinary = -(p * F.log_softmax(student, -1)).sum(-1).mean()            # soft-target CE
    entropy = -(p * p.log()).sum(-1).mean()
    assert torch.allclose(soft_cross_entropy(student, teacher, 1.0), ordinary, atol=1e-6)
    assert torch.allclose(kd_loss(student, teacher, 1.0), ordinary - entropy, atol=1e-6)
    g_kd = torch.autograd.grad(kd_loss(student, teacher, 1.0), student)[0]
    g_ce = torch.autograd.grad(ordinary, student)[0]
    assert torch.allclose(g_kd, g_ce, atol=1e-7)
    # With one-hot targets soft cross-entropy is F.cross_entropy.
    hard = torch.tensor([1, 0, 3, 7, 2])
    one_hot_logits = 1e4 * F.one_hot(hard, 8).float()
    assert torch.allclose(soft_cross_entropy(student, one_hot_logits),
                          F.cross_entropy(student, hard), atol=1e-5)


def test_losses_reject_mismatched_shapes():
    with pytest.raises(ValueError, match="same shape"):
        kd_loss(logits(2, 3), logits(2, 4))
    with pytest.raises(ValueError, match="hidden size"):
        cosine_hidden_loss(logits(2, 3, 8), logits(2, 3, 16))


# ------------------------------------------------------------------ the triple loss


def test_cosine_hidden_loss_matches_cosine_embedding_loss_on_real_tokens():
    s, t = logits(2, 5, 8, seed=1), logits(2, 5, 8, seed=2)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0]])
    real = mask.bool()
    expected = torch.nn.CosineEmbeddingLoss()(s[real], t[real], torch.ones(int(real.sum())))
    assert torch.allclose(cosine_hidden_loss(s, t, mask), expected, atol=1e-6)
    assert cosine_hidden_loss(t, t).abs().item() < 1e-6
    assert cosine_hidden_loss(3 * t, t).abs().item() < 1e-6      # the length does not matter


def test_triple_loss_is_the_weighted_sum_of_its_terms():
    s_logits, t_logits = logits(7, 11, seed=1), logits(7, 11, seed=2)
    targets = torch.randint(0, 11, (7,), generator=torch.Generator().manual_seed(3))
    s_hidden, t_hidden = logits(2, 4, 6, seed=4), logits(2, 4, 6, seed=5)
    out = triple_loss(s_logits, t_logits, targets, s_hidden, t_hidden, temperature=2.0,
                      alpha_ce=5.0, alpha_mlm=2.0, alpha_cos=1.0)
    assert torch.allclose(out["ce"], kd_loss(s_logits, t_logits, 2.0))
    assert torch.allclose(out["mlm"], F.cross_entropy(s_logits, targets))
    assert torch.allclose(out["cos"], cosine_hidden_loss(s_hidden, t_hidden))
    assert torch.allclose(out["loss"], 5 * out["ce"] + 2 * out["mlm"] + out["cos"])
    no_cos = triple_loss(s_logits, t_logits, targets, s_hidden, t_hidden, alpha_cos=0.0)
    assert torch.allclose(no_cos["loss"], 5 * out["ce"] + 2 * out["mlm"])


def test_triple_loss_takes_another_kd_function():
    s_logits, t_logits = logits(7, 11, seed=1), logits(7, 11, seed=2)
    targets = torch.randint(0, 11, (7,), generator=torch.Generator().manual_seed(3))
    s_hidden, t_hidden = logits(2, 4, 6, seed=4), logits(2, 4, 6, seed=5)
    seen = []

    def my_kd(student, teacher, temperature):
        seen.append(temperature)
        return kd_loss_reference(student, teacher, temperature)

    out = triple_loss(s_logits, t_logits, targets, s_hidden, t_hidden, temperature=3.0, kd=my_kd)
    assert seen == [3.0] and torch.allclose(out["ce"], kd_loss(s_logits, t_logits, 3.0))


# ------------------------------------------------------------------ the student model


def teacher_and_student(num_layers=4, student_layers=2):
    torch.manual_seed(0)
    config = BertConfig.from_preset("bert-nano", vocab_size=60, num_layers=num_layers,
                                    max_position=16, dropout=0.0, attention_dropout=0.0)
    teacher = BertForPreTraining(config, nsp=False).eval()
    with torch.no_grad():   # a non-zero segment table, so folding it matters
        teacher.bert.encoder.embeddings.segment.weight.normal_()
    student = DistilBertForMaskedLM(distilbert_config(config, num_layers=student_layers)).eval()
    return teacher, student


def test_distilbert_has_no_segment_table_and_no_pooler():
    _, student = teacher_and_student()
    assert student.distilbert.encoder.embeddings.segment is None
    assert student.distilbert.pooler is None
    assert student.mlm.word_embeddings is student.distilbert.word_embeddings
    with pytest.raises(ValueError, match="distilbert_config"):
        DistilBertModel(BertConfig.from_preset("bert-nano"))
    with pytest.raises(ValueError, match="no token-type"):
        distilbert_config("bert-nano", type_vocab_size=2)


def test_every_other_layer():
    assert every_other_layer(4, 2) == [0, 2]
    assert every_other_layer(12, 6) == [0, 2, 4, 6, 8, 10]
    with pytest.raises(ValueError, match="between 1 and 4"):
        every_other_layer(4, 5)


def test_student_from_every_other_teacher_layer_reproduces_the_teacher_path():
    teacher, student = teacher_and_student()
    assert init_from_teacher(student, teacher) == [0, 2]
    t_layers, s_layers = teacher.bert.encoder.layers, student.distilbert.encoder.layers
    for s_layer, t_index in zip(s_layers, (0, 2)):
        for (name, a), (_, b) in zip(s_layer.state_dict().items(),
                                     t_layers[t_index].state_dict().items()):
            assert torch.equal(a, b), name
    # With the segment row folded into positions, the student's embeddings equal the teacher's
    # for single-segment inputs, and a 1-layer student equals the teacher's first layer.
    ids = torch.randint(5, 60, (2, 9), generator=torch.Generator().manual_seed(1))
    mask = torch.ones_like(ids)
    mask[1, 6:] = 0
    teacher_out = teacher.bert(ids, attention_mask=mask, output_hidden_states=True)
    student_out = student.distilbert(ids, attention_mask=mask, output_hidden_states=True)
    assert torch.allclose(student_out.hidden_states[0], teacher_out.hidden_states[0], atol=1e-6)
    assert torch.allclose(student_out.hidden_states[1], teacher_out.hidden_states[1], atol=1e-6)
    assert torch.allclose(student.mlm.bias, teacher.mlm.bias)
    _, one_layer = teacher_and_student(4, 1)
    init_from_teacher(one_layer, teacher)
    assert torch.allclose(one_layer(ids, attention_mask=mask).logits,
                          teacher.mlm(teacher_out.hidden_states[1]),
                          atol=1e-5)


def test_dropping_the_segment_row_changes_the_embeddings():
    teacher, student = teacher_and_student()
    init_from_teacher(student, teacher, fold_segment=False)
    ids = torch.randint(5, 60, (1, 6))
    t = teacher.bert(ids, output_hidden_states=True).hidden_states[0]
    s = student.distilbert(ids, output_hidden_states=True).hidden_states[0]
    assert not torch.allclose(s, t, atol=1e-3)


def test_init_from_teacher_needs_the_teachers_width():
    teacher, _ = teacher_and_student()
    narrow = DistilBertForMaskedLM(distilbert_config(teacher.config.replace(hidden_size=32,
                                                                            num_heads=1)))
    with pytest.raises(ValueError, match="hidden_size"):
        init_from_teacher(narrow, teacher)
    _, student = teacher_and_student()
    with pytest.raises(ValueError, match="layers must name 2"):
        init_from_teacher(student, teacher, layers=[0, 4])


def test_student_masked_lm_and_classifier_run():
    teacher, student = teacher_and_student()
    ids = torch.randint(5, 60, (3, 7))
    labels = torch.full_like(ids, -100)
    labels[:, 2] = ids[:, 2]
    out = student(ids, mlm_labels=labels)
    assert out.logits.shape == (3, 60) and out.targets.shape == (3,) and out.loss.ndim == 0
    assert student(ids).logits.shape == (3, 7, 60)
    for encoder in (student.distilbert, teacher.bert):   # the same head fits both
        classifier = DistilBertClassifier(encoder, num_classes=3)
        result = classifier(ids, attention_mask=torch.ones_like(ids), labels=torch.tensor([0, 1,
                                                                                           2]))
        assert result.logits.shape == (3, 3) and result.loss.ndim == 0


# ------------------------------------------------------------------ graders and the widget


def test_graders_accept_the_library_and_reject_a_softmax_without_temperature():
    assert check.grade("temperature_softmax", softmax_with_temperature, print=False).passed
    assert check.grade("kd_loss", kd_loss, print=False).passed
    assert check.grade("kd_loss", kd_loss_reference, print=False).passed
    assert not check.grade("temperature_softmax", lambda z, t: z.softmax(-1), print=False).passed
    naive = check.grade("temperature_softmax", lambda z, t: (z / t).exp() / (z / t).exp().sum(
        -1, keepdim=True), print=False)
    assert not naive.passed and naive.trial == 5       # overflows on the large logits
    no_t2 = check.grade("kd_loss", lambda s, t, T: kd_loss(s, t, T) / T**2, print=False)
    assert not no_t2.passed


def test_show_temperature_runs_headless_and_flattens():
    z = torch.tensor([4.0, 2.0, 1.0, 0.0, -1.0])
    ax, p1 = show_temperature(z, 1.0, labels=list("abcde"))
    _, p4 = show_temperature(z, 4.0)
    assert torch.allclose(p1, softmax_with_temperature(z, 1.0))
    assert p4.max() < p1.max() and "entropy" in ax.get_title()
    with pytest.raises(ValueError, match="one distribution"):
        show_temperature(torch.zeros(2, 3))
    widget = temperature_explorer(z)
    slider = [c for c in widget.children if getattr(c, "description", "") == "T"][0]
    assert slider.value == 1.0
    plt.close("all")
