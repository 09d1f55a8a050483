import torch


class CurveFitter:
    def __init__(self, model, lr=0.5, max_iter=10, weight_decay=0.0):
        self.model = model
        self.opt = torch.optim.LBFGS(model.parameters(), lr=lr, max_iter=max_iter, line_search_fn="strong_wolfe")
        self.weight_decay = weight_decay
        self.history = []

    def regulariser(self):
        return self.weight_decay * sum(p.pow(2).sum() for p in self.model.parameters())

    def fit(self, t, x_obs, outer_steps=5):
        for it in range(outer_steps):
            pred = self.model(t)

            def closure():
                self.opt.zero_grad()
                loss = torch.mean((pred - x_obs) ** 2) + self.regulariser()
                loss.backward()
                return loss

            loss = self.opt.step(closure)
            self.history.append(loss.item())
            print(f"outer {it} loss {loss.item():.6f} {self.model.describe()}")
        return self.history[-1]
