import torch.nn.functional as F

__all__ = ["distill_loss", "accuracy"]


def distill_loss(student_logits, teacher_logits, labels, T=4.0, alpha=0.7):
    soft = F.kl_div(F.log_softmax(student_logits / T, dim=1), F.softmax(teacher_logits / T, dim=1),
                    reduction="batchmean") * T * T
    hard = F.cross_entropy(student_logits, labels)
    return alpha * soft + (1 - alpha) * hard


def accuracy(logits, labels):
    return (logits.argmax(1) == labels).float().mean().item()
