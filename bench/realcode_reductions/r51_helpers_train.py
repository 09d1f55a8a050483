"""Helper module of r51_model_unwrapped_behind_a_dir_test_then_passed_to_a_callback.py: the training loop
of MadryLab/robustness robustness/train.py (`train_model`, `_model_loop`, `has_attr`), reduced."""
import torch as ch
from torch.optim import SGD


def has_attr(obj, k):
    """Checks both that obj.k exists and is not equal to None"""
    try:
        return (getattr(obj, k) is not None)
    except KeyError as e:
        return False
    except AttributeError as e:
        return False


def make_optimizer_and_schedule(args, model, checkpoint, params):
    return SGD(model.parameters(), args.lr), None


def train_model(args, model, loaders, *, checkpoint=None, store=None, update_params=None):
    writer = None
    train_loader, val_loader = loaders
    opt, schedule = make_optimizer_and_schedule(args, model, checkpoint, update_params)
    start_epoch = 0
    for epoch in range(start_epoch, args.epochs):
        train_prec1, train_loss = _model_loop(args, 'train', train_loader,
                                              model, opt, epoch, False, writer)
        if schedule: schedule.step()
    return model


def _model_loop(args, loop_type, loader, model, opt, epoch, adv, writer):
    is_train = (loop_type == 'train')
    # switch to train/eval mode depending
    model = model.train() if is_train else model.eval()
    train_criterion = ch.nn.CrossEntropyLoss()
    for i, (inp, target) in enumerate(loader):
        output, final_inp = model(inp, target=target, make_adv=adv)
        loss = train_criterion(output, target)
        reg_term = 0.0
        if has_attr(args, "regularizer"):
            reg_term = args.regularizer(model, inp, target)
        loss = loss + reg_term
        # compute gradient and do SGD step
        if is_train:
            opt.zero_grad()
            loss.backward()
            opt.step()
    return 0.0, loss.item()
