"""Data-free distillation: generator steps, then student steps, on a batch regenerated every call.

Model believed: `teacher_logits` (and the activations) of the generator step, whose graph
`generator_loss.backward()` frees, reach the student's loss in the next iteration. They never do:
the student branch recomputes them under `no_grad` whenever `idx_pseudo % n_repeat_batch ==
n_generator_iter`, which holds at the first student step of every cycle (the counter advances by
one, and the generator branch covers exactly the residues below `n_generator_iter`); later student
steps of the cycle reuse those grad-free values. `x_pseudo` itself is a fresh generator forward at
every call of `__next__`. Runs fine. Reduces polo5/ZeroShotKnowledgeTransfer
(e24915d713672554800372c777c9014e3399e13b) solver.py:114, where gradguard reports GG003 ("`x_pseudo`
carries the previous iteration's graph, which the backward at line 99 freed") and GG005 (naming
`y` of `attention_diff`); computing the teacher's outputs under `no_grad` at every student step makes
both disappear. This reduction reports the same belief as GG002 at line 97 (`student_loss`
backward-ed after `generator_loss.backward()` at line 86 freed a graph they share; the message
names `student_loss` itself as what they share, and `teacher_logits` without the loop over the
activations): the rule and wording depend on the student being the repository's WideResNet from
models/ (a student defined in the file gives GG002 in the original too). Tried without
getting GG003 here: star-unpacked activations, a loop over activations, a select_model factory,
models passed in, BatchNorm and in-place ReLU in the student, the original's logging block.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LearnableLoader(nn.Module):
    """Infinite loader holding a generator: each call runs the generator again on the current z."""

    def __init__(self, z_dim, batch_size, n_repeat_batch):
        super().__init__()
        self.generator = nn.Sequential(nn.Linear(z_dim, 32), nn.Tanh())
        self.z_dim, self.batch_size, self.n_repeat_batch = z_dim, batch_size, n_repeat_batch
        self._idx = 0
        self.z = torch.randn(batch_size, z_dim)

    def __next__(self):
        if self._idx == self.n_repeat_batch:
            self.z = torch.randn(self.batch_size, self.z_dim)
            self._idx = 0
        images = self.generator(self.z)
        self._idx += 1
        return images


class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, width), nn.ReLU())
        self.mid = nn.Sequential(nn.Linear(width, 16), nn.ReLU())
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        act1 = self.body(x)
        act2 = self.mid(act1)
        return self.head(act2), act1, act2


def attention_diff(x, y):
    return (F.normalize(x.pow(2)) - F.normalize(y.pow(2))).pow(2).mean()


def divergence(student_logits, teacher_logits, temperature=1.0):
    return F.kl_div(F.log_softmax(student_logits / temperature, dim=1),
                    F.softmax(teacher_logits / temperature, dim=1), reduction="batchmean")


class Solver:
    def __init__(self, n_generator_iter=1, n_student_iter=5, total=12):
        self.n_generator_iter, self.n_student_iter, self.total = n_generator_iter, n_student_iter, total
        self.n_repeat_batch = n_generator_iter + n_student_iter
        self.log = []
        self.teacher, self.student = Net(64), Net(16)
        self.teacher.eval()
        self.generator = LearnableLoader(8, 16, self.n_repeat_batch)
        self.optimizer_generator = torch.optim.Adam(self.generator.parameters(), lr=1e-3)
        self.optimizer_student = torch.optim.Adam(self.student.parameters(), lr=1e-3)

    def run(self):
        n_pseudo_batches, idx_pseudo = 0, 0
        while n_pseudo_batches < self.total:
            x_pseudo = self.generator.__next__()
            if idx_pseudo % self.n_repeat_batch < self.n_generator_iter:
                student_logits, *student_act = self.student(x_pseudo)
                teacher_logits, *teacher_act = self.teacher(x_pseudo)
                generator_loss = -divergence(student_logits, teacher_logits)
                self.optimizer_generator.zero_grad()
                generator_loss.backward()
                self.optimizer_generator.step()
            elif idx_pseudo % self.n_repeat_batch < (self.n_generator_iter + self.n_student_iter):
                if idx_pseudo % self.n_repeat_batch == self.n_generator_iter:
                    with torch.no_grad():  # teacher and x_pseudo fixed for the rest of the cycle
                        teacher_logits, *teacher_act = self.teacher(x_pseudo)
                student_logits, *student_act = self.student(x_pseudo)
                student_loss = divergence(student_logits, teacher_logits)
                for i in range(1, len(student_act)):
                    student_loss = student_loss + 0.1 * attention_diff(student_act[i], teacher_act[i])
                self.optimizer_student.zero_grad()
                student_loss.backward()
                self.optimizer_student.step()
            if (idx_pseudo + 1) % self.n_repeat_batch == 0:
                with torch.no_grad():
                    teacher_maxes = torch.softmax(teacher_logits, dim=1).max(dim=1)[0]
                    student_maxes = torch.softmax(student_logits, dim=1).max(dim=1)[0]
                    self.log.append((generator_loss.item(), student_loss.item(), teacher_maxes.mean().item(), student_maxes.mean().item()))
                n_pseudo_batches += 1
            idx_pseudo += 1
        return student_loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    print("ok", Solver().run())
