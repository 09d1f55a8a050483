"""WGAN with weight clipping: the critic is trained every iteration, the generator every n_critic."""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, latent_dim, img_dim):
        super().__init__()
        self.model = nn.Sequential(
            nn.Linear(latent_dim, 64), nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(64, 64), nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(64, img_dim), nn.Tanh(),
        )

    def forward(self, z):
        return self.model(z)


class Critic(nn.Module):
    def __init__(self, img_dim):
        super().__init__()
        self.model = nn.Sequential(
            nn.Linear(img_dim, 64), nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(64, 1),
        )

    def forward(self, img):
        return self.model(img)


def train(generator, critic, dataloader, latent_dim, n_critic=3, clip_value=0.01, lr=5e-5):
    optimizer_G = torch.optim.RMSprop(generator.parameters(), lr=lr)
    optimizer_D = torch.optim.RMSprop(critic.parameters(), lr=lr)
    batches_done = 0
    for i, real_imgs in enumerate(dataloader):
        optimizer_D.zero_grad()
        z = torch.randn(real_imgs.shape[0], latent_dim)
        fake_imgs = generator(z)
        loss_D = -torch.mean(critic(real_imgs)) + torch.mean(critic(fake_imgs.detach()))
        loss_D.backward()
        optimizer_D.step()
        for p in critic.parameters():
            p.data.clamp_(-clip_value, clip_value)

        if (i + 1) % n_critic == 0:
            optimizer_G.zero_grad()
            loss_G = -torch.mean(critic(fake_imgs))
            loss_G.backward()
            optimizer_G.step()
            batches_done += 1
    return loss_D.item(), loss_G.item(), batches_done


if __name__ == "__main__":
    torch.manual_seed(0)
    latent_dim, img_dim = 8, 20
    images = torch.tanh(torch.randn(384, img_dim))
    generator = Generator(latent_dim, img_dim)
    critic = Critic(img_dim)
    loss_D, loss_G, done = train(generator, critic, images.split(32), latent_dim)
    param_sum = sum(p.sum().item() for p in generator.parameters())
    print(f"final loss_D {loss_D:.6f} loss_G {loss_G:.6f} g_steps {done} param_sum {param_sum:.6f}")
