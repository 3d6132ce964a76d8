"""Knowledge distillation: a student learns from a teacher's outputs, not only from labels.

Hinton et al. (2015) soften both models' distributions with a temperature T,

    p_i = exp(z_i / T) / sum_j exp(z_j / T)

so that the teacher's small probabilities ("a 7 looks a bit like a 1") carry signal, and train
the student to match them with KL(teacher || student). The gradient of that loss shrinks like
1 / T^2, so the loss is multiplied by T^2 to keep its scale comparable across temperatures.

Everything here is written out with plain tensor operations; tests check each function against
`torch.nn.functional` (for example `F.kl_div`) so the fast and the readable agree.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

__all__ = [
    "cosine_hidden_loss",
    "kd_loss",
    "kd_loss_reference",
    "log_softmax_with_temperature",
    "logit_mse",
    "soft_cross_entropy",
    "softmax_with_temperature",
    "triple_loss",
]


def _check_temperature(temperature: float) -> None:
    if not (temperature > 0 and math.isfinite(temperature)):
        raise ValueError(f"temperature must be a finite number > 0, got {temperature}; T = 1 is "
                         f"the plain softmax, and a very large T makes every distribution flat")


def _check_same_shape(student_logits: torch.Tensor, teacher_logits: torch.Tensor) -> None:
    if student_logits.shape != teacher_logits.shape:
        raise ValueError(
            f"student logits {tuple(student_logits.shape)} and teacher logits "
            f"{tuple(teacher_logits.shape)} must have the same shape (batch..., classes)"
        )


def softmax_with_temperature(logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """Softmax over the last dimension of `logits / temperature`, written out.

    T = 1 is the ordinary softmax; T > 1 flattens the distribution, T -> 0 approaches argmax.
    """
    _check_temperature(temperature)
    scaled = logits / temperature  # (..., C)
    scaled = scaled - scaled.max(dim=-1, keepdim=True).values  # (..., C) same softmax, no overflow
    exp = scaled.exp()  # (..., C)
    return exp / exp.sum(dim=-1, keepdim=True)  # (..., C) rows sum to 1


def log_softmax_with_temperature(logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """log(softmax(logits / T)), computed stably (log-sum-exp) for the losses below."""
    _check_temperature(temperature)
    scaled = logits / temperature  # (..., C)
    return scaled - torch.logsumexp(scaled, dim=-1, keepdim=True)  # (..., C)


def kd_loss(
    student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float = 1.0
) -> torch.Tensor:
    """Hinton's loss: T^2 * KL(teacher_T || student_T), summed over classes, mean over examples.

    student_logits, teacher_logits: (N, C) or (..., C); every leading position is one example.
    The teacher is treated as a constant (its logits are detached).
    """
    _check_same_shape(student_logits, teacher_logits)
    teacher_probs = softmax_with_temperature(teacher_logits.detach(), temperature)  # (..., C)
    teacher_log_probs = log_softmax_with_temperature(teacher_logits.detach(), temperature)
    student_log_probs = log_softmax_with_temperature(student_logits, temperature)  # (..., C)
    kl = (teacher_probs * (teacher_log_probs - student_log_probs)).sum(dim=-1)  # (...,)
    return kl.mean() * temperature**2


def soft_cross_entropy(
    student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float = 1.0
) -> torch.Tensor:
    """Cross-entropy of the student against the teacher's soft targets, mean over examples.

    -sum_c p_teacher(c) log p_student(c) at temperature T. It differs from `kd_loss / T^2` only
    by the teacher's entropy, a constant for the student, so both give the same gradients up to
    the T^2 factor. TinyBERT's prediction-layer loss is this one (with T = 1).
    """
    _check_same_shape(student_logits, teacher_logits)
    teacher_probs = softmax_with_temperature(teacher_logits.detach(), temperature)  # (..., C)
    student_log_probs = log_softmax_with_temperature(student_logits, temperature)  # (..., C)
    return -(teacher_probs * student_log_probs).sum(dim=-1).mean()


def logit_mse(student_logits: torch.Tensor, teacher_logits: torch.Tensor) -> torch.Tensor:
    """Mean squared error between logits (Tang et al.'s BiLSTM distillation), mean over entries."""
    _check_same_shape(student_logits, teacher_logits)
    difference = student_logits - teacher_logits.detach()  # (..., C)
    return (difference**2).mean()


# ------------------------------------------------------------------ DistilBERT's triple loss


def kd_loss_reference(
    student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float = 1.0
) -> torch.Tensor:
    """`kd_loss` through PyTorch's own KL: T^2 * F.kl_div(log q_s, p_t, reduction="batchmean").

    This is how DistilBERT's `distiller.py` writes it. `kl_div` takes the student's
    LOG-probabilities and the teacher's probabilities; "batchmean" sums over classes and divides
    by the number of rows ("mean" would also divide by the number of classes).
    """
    import torch.nn.functional as F

    _check_same_shape(student_logits, teacher_logits)
    classes = student_logits.size(-1)
    student_log_probs = F.log_softmax(student_logits.reshape(-1, classes) / temperature, dim=-1)
    teacher_probs = F.softmax(teacher_logits.detach().reshape(-1, classes) / temperature, dim=-1)
    return F.kl_div(student_log_probs, teacher_probs, reduction="batchmean") * temperature**2


def cosine_hidden_loss(
    student_hidden: torch.Tensor,
    teacher_hidden: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """DistilBERT's L_cos: mean over real tokens of 1 - cos(h_student, h_teacher).

    student_hidden, teacher_hidden: (B, T, H) last hidden states (the same H: the student keeps
    the teacher's width). attention_mask: (B, T), 1 at real tokens; padding is left out. Equal to
    `nn.CosineEmbeddingLoss` with target +1 on the real tokens.
    """
    if student_hidden.shape != teacher_hidden.shape:
        raise ValueError(
            f"student hidden states {tuple(student_hidden.shape)} and teacher hidden states "
            f"{tuple(teacher_hidden.shape)} must have the same shape (B, T, H): the cosine loss "
            f"needs the student to keep the teacher's hidden size"
        )
    if attention_mask is None:
        attention_mask = torch.ones(student_hidden.shape[:-1], device=student_hidden.device)
    real = attention_mask.bool()                                              # (B, T)
    s, t = student_hidden[real], teacher_hidden.detach()[real]                # (N, H) each
    cosine = (s * t).sum(-1) / (s.norm(dim=-1) * t.norm(dim=-1)).clamp_min(1e-8)  # (N,)
    return (1.0 - cosine).mean()


def triple_loss(
    student_logits: torch.Tensor,
    teacher_logits: torch.Tensor,
    mlm_targets: torch.Tensor,
    student_hidden: torch.Tensor,
    teacher_hidden: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
    *,
    temperature: float = 2.0,
    alpha_ce: float = 5.0,
    alpha_mlm: float = 2.0,
    alpha_cos: float = 1.0,
    kd: Callable[[torch.Tensor, torch.Tensor, float], torch.Tensor] | None = None,
) -> dict[str, torch.Tensor]:
    """DistilBERT's loss: alpha_ce L_ce + alpha_mlm L_mlm + alpha_cos L_cos.

    student_logits, teacher_logits: (N, V) MLM logits at the same N masked positions;
    mlm_targets: (N,) the original ids there; student_hidden, teacher_hidden: (B, T, H) last
    hidden states; attention_mask: (B, T).

    - L_ce  = T^2 KL(teacher_T || student_T) over the masked positions (`kd_loss`);
    - L_mlm = cross-entropy with the true tokens at T = 1;
    - L_cos = mean 1 - cos of the last hidden states over real tokens.

    `kd(student_logits, teacher_logits, temperature)` computes L_ce (`kd_loss` when None; a
    lesson passes the student's own once it is graded correct).
    Defaults are the README command of the reference code (T = 2, 5 / 2 / 1). Returns a dict
    with the total under "loss" and each term (detached) under "ce", "mlm", "cos", so it can
    be returned straight from a `train` loss function. A batch with no masked position
    (N = 0) gives 0 for the two masked-position terms, as `masked_lm_loss` does.
    """
    import torch.nn.functional as F

    if mlm_targets.shape != student_logits.shape[:-1]:
        raise ValueError(f"mlm_targets {tuple(mlm_targets.shape)} must hold one id per row of "
                         f"the logits {tuple(student_logits.shape)}")
    if mlm_targets.numel() == 0:   # no masked position in the batch: nothing to distil there
        ce = mlm = student_logits.sum() * 0                   # 0, and still differentiable
    else:
        ce = (kd or kd_loss)(student_logits, teacher_logits, temperature)
        mlm = F.cross_entropy(student_logits, mlm_targets)
    cos = cosine_hidden_loss(student_hidden, teacher_hidden, attention_mask)
    loss = alpha_ce * ce + alpha_mlm * mlm + alpha_cos * cos
    return {"loss": loss, "ce": ce.detach(), "mlm": mlm.detach(), "cos": cos.detach()}
