import torch
import torch.nn.functional as F


def soft_update(target, source, tau):
    for tp, sp in zip(target.parameters(), source.parameters()):
        tp.data.copy_(tau * sp.data + (1 - tau) * tp.data)


def td3_update(it, batch, actor, critic, actor_target, critic_target, actor_optimizer, critic_optimizer,
               discount=0.99, tau=0.005, policy_noise=0.2, noise_clip=0.5, policy_freq=2):
    state, action, next_state, reward, not_done = batch
    with torch.no_grad():
        noise = (torch.randn_like(action) * policy_noise).clamp(-noise_clip, noise_clip)
        next_action = (actor_target(next_state) + noise).clamp(-1.0, 1.0)
        target_q1, target_q2 = critic_target(next_state, next_action)
        target_q = reward + not_done * discount * torch.min(target_q1, target_q2)

    current_q1, current_q2 = critic(state, action)
    critic_loss = F.mse_loss(current_q1, target_q) + F.mse_loss(current_q2, target_q)
    critic_optimizer.zero_grad()
    critic_loss.backward()
    critic_optimizer.step()

    if it % policy_freq == 0:
        actor_loss = -critic.q1(state, actor(state)).mean()
        actor_optimizer.zero_grad()
        actor_loss.backward()
        actor_optimizer.step()
        soft_update(critic_target, critic, tau)
        soft_update(actor_target, actor, tau)
    return critic_loss.item()
