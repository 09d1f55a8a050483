import argparse
import copy

import torch

from lm import WordLSTM, batchify, synthetic_corpus, train_epoch, evaluate


def main():
    p = argparse.ArgumentParser(description="word-level LSTM language model")
    p.add_argument("--ntoken", type=int, default=40)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--bptt", type=int, default=8)
    p.add_argument("--bsz", type=int, default=4)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=1111)
    args = p.parse_args()
    torch.manual_seed(args.seed)

    corpus = synthetic_corpus(600, args.ntoken)
    train_data = batchify(corpus[:480], args.bsz)
    val_data = batchify(corpus[480:], args.bsz)

    model = WordLSTM(args.ntoken)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    best_val, best_state = None, None
    for epoch in range(1, args.epochs + 1):
        train_epoch(model, train_data, optimizer, args.bsz, args.bptt)
        val_loss = evaluate(model, val_data, args.bsz, args.bptt)
        print(f"epoch {epoch} valid loss {val_loss:.3f}")
        if best_val is None or val_loss < best_val:
            best_val, best_state = val_loss, copy.deepcopy(model.state_dict())
    model.load_state_dict(best_state)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"best val {best_val:.4f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
