import torch
import torch.nn as nn
import torch.nn.functional as F


def fetch_teacher_outputs(teacher, batches):
    """Teacher logits for every training batch, computed once to save time."""
    teacher.eval()
    outputs = []
    with torch.no_grad():
        for x, _ in batches:
            outputs.append(teacher(x))
    return outputs


def loss_fn_kd(outputs, labels, teacher_outputs, alpha=0.9, temperature=4.0):
    """Hinton et al.'s distillation loss: soft targets at temperature T plus hard-label CE."""
    soft = nn.KLDivLoss(reduction="batchmean")(
        F.log_softmax(outputs / temperature, dim=1),
        F.softmax(teacher_outputs / temperature, dim=1),
    ) * (alpha * temperature * temperature)
    hard = F.cross_entropy(outputs, labels) * (1.0 - alpha)
    return soft + hard


def make_net(in_dim, hidden, n_classes):
    return nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, n_classes))
