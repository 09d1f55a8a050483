"""The model's containers and objects, unit by unit: an item stored at a variable index and read back
at the same index, the names a mapping's keys are, a module's own `_modules`, and the settings of an
object a call made and dropped. Each shape comes with its buggy twin, which must still be found."""

from __future__ import annotations

import textwrap

from gradguard.analysis import analyze
from gradguard.analysis.interpreter import reachable_owners
from gradguard.analysis.state import ClassInfo, State, heap_owner
from gradguard.analysis.values import SCALAR, Kind, Value, cut, join, node_id, rename, same

import libcst as cst


def _found(code: str) -> list[tuple[int, str]]:
    source = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n" + textwrap.dedent(code)
    return [(d.span.start.row, d.code) for d in analyze(source)]


# -- an item stored at a variable index ---------------------------------------------------------------

_STATES = """
    class LM(nn.RNN):
        def init_hidden(self, bsz):
            return torch.zeros(1, bsz, 4)


    model = LM(3, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    hidden = [model.init_hidden(2) for _ in range(2)]
    for step in range(3):
        opt.zero_grad()
        for s_id in range(2):
            {carry}
            out, hidden[s_id] = model(torch.randn(5, 2, 3), hidden[s_id])
            loss = out.pow(2).mean()
            loss.backward()
        opt.step()
"""


def test_an_item_detached_at_a_variable_index_is_read_back_detached_at_that_index() -> None:
    # One sub-batch's LSTM state per inner step, detached just before use (zihangdai/mos).
    assert _found(_STATES.format(carry="hidden[s_id] = hidden[s_id].detach()")) == []


def test_an_item_carried_at_a_variable_index_without_detaching_is_still_found() -> None:
    assert _found(_STATES.format(carry="pass")) == [(19, "GG003")]


def test_an_index_bound_again_no_longer_reads_the_item_stored_at_the_old_one() -> None:
    # `i` rebound between the store and the read: the item may be another one, which kept its graph.
    found = _found("""
        lin = nn.Linear(4, 4)
        states = [torch.zeros(2, 4) for _ in range(2)]
        for step in range(3):
            for i in range(2):
                states[i] = lin(states[i])
            i = step % 2
            states[i] = states[i].detach()
            i = (step + 1) % 2
            loss = states[i].sum()
            loss.backward()
        """)
    assert [code for _, code in found] == ["GG003"]


def _item(site: int) -> Value:
    return Value(Kind.TENSOR, frozenset({node_id(site)}), frozenset({node_id(site)}))


def test_a_stored_item_survives_a_join_only_where_both_paths_stored_it_under_the_same_binding() -> None:
    binding, other = frozenset({cst.Pass()}), frozenset({cst.Pass()})
    item = _item(1)
    mine = Value(Kind.LIST, item.nodes, item.top, indexed=(("i", binding, item),))
    assert join(mine, Value(Kind.LIST, item.nodes, item.top, indexed=(("i", binding, item),))).indexed == mine.indexed
    assert join(mine, Value(Kind.LIST, item.nodes, item.top, indexed=(("i", other, item),))).indexed == ()
    assert join(mine, Value(Kind.LIST, item.nodes, item.top)).indexed == ()
    assert not same(mine, Value(Kind.LIST, item.nodes, item.top))
    assert cut(mine).indexed == ()
    aged = rename(mine, 1)
    assert aged.indexed[0][2].nodes == frozenset({node_id(1, 1)})


# -- names: the keys of a mapping, a module's `_modules` -------------------------------------------------


_SUBDICT = """
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)
            self.cache = dict()

        def get_subdict(self, params):
            {names}
            if names not in self.cache:
                self.cache[names] = names
            return dict([(name, params[name]) for name in self.cache[names]])

        def forward(self, x, params):
            sub = self.get_subdict(params)
            return F.linear(x, sub["weight"], sub["bias"])


    model = Net()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(3):
        params = dict((n, p * 1.0) for n, p in model.fc.named_parameters())
        loss = model(torch.randn(5, 4), params).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        {keep}
"""


def test_the_keys_of_a_mapping_carry_none_of_its_values_graphs() -> None:
    # tristandeleu/pytorch-meta: `MetaModule.get_subdict` caches the key names on the module.
    assert _found(_SUBDICT.format(names="names = tuple(params.keys())", keep="pass")) == []
    assert _found(_SUBDICT.format(names="names = tuple(n for n, _ in params.items())", keep="pass")) == []


def test_the_values_of_a_mapping_still_carry_their_graphs() -> None:
    found = _found("""
        lin = nn.Linear(4, 4)
        opt = torch.optim.SGD(lin.parameters(), lr=0.1)
        prev = torch.zeros(2, 4)
        for step in range(3):
            outputs = {"features": lin(torch.randn(2, 4))}
            for name, value in outputs.items():
                current = value
            loss = current.sum() + prev.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            prev = current
        """)
    assert [code for _, code in found] == ["GG003"]


def test_a_modules_own_submodules_by_name_are_its_modules_not_a_parameter() -> None:
    found = _found("""
        class Layer(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.names = {}

            def forward(self, x, key=None):
                if key is not None and key not in self.names:
                    self.names[key] = str(key)
                return self.fc(x)


        class Chain(nn.Sequential):
            def forward(self, x):
                for name, module in self._modules.items():
                    x = module(x, key=name)
                return x


        model = Chain(Layer(), Layer())
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            loss = model(torch.randn(2, 4)).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """)
    assert found == []


# -- the settings of an object a call made and dropped ----------------------------------------------------


def test_an_object_no_variable_or_reachable_attribute_holds_is_not_reachable() -> None:
    loader = ClassInfo(cst.ClassDef(name=cst.Name("Loader"), body=cst.IndentedBlock(body=[])), "Loader", ())
    net = ClassInfo(cst.ClassDef(name=cst.Name("Net"), body=cst.IndentedBlock(body=[])), "Net", ())
    made = Value(Kind.INSTANCE, ref=loader, alloc="val.gt_loader")
    kept = Value(Kind.INSTANCE, ref=net, alloc="model")
    child = Value(Kind.INSTANCE, ref=loader, alloc="model.loader")
    state = State()
    state.frames[0]["model"] = kept
    state.heap[(heap_owner(kept), "loader")] = child
    state.heap[(heap_owner(made), "name")] = SCALAR
    state.frames.append({"gt_loader": made})
    owners = reachable_owners(state, [SCALAR], skip_top=True)
    assert owners == {heap_owner(kept), heap_owner(child)}
    assert heap_owner(made) in reachable_owners(state, [SCALAR])


_EVALUATED = """
    class Loader:
        def __init__(self, cfg):
            self.name = cfg.dataset

        def __call__(self):
            if self.name == "a":
                return [0]
            elif self.name == "b":
                return [1]
            return [2]


    def validate(cfg, model):
        with torch.no_grad():
            scores = [model(torch.randn(2, 4)).sum().item() for _ in range(2)]
        labels = Loader(cfg)()
        return sum(scores) + len(labels)


    def run(cfg, generator, discriminator, opt_g, opt_d):
        for step in range(cfg.iters):
            fake = generator(torch.randn(2, 4))
            g_loss = -discriminator(fake).mean()
            d_loss = discriminator(fake.detach()).mean()
            opt_d.zero_grad()
            d_loss.backward()
            {step_d}
            opt_g.zero_grad()
            g_loss.backward()
            opt_g.step()
            {step_d_after}
            if step % cfg.log_every == 0:
                if step % cfg.val_every == 0:
                    print(validate(cfg, generator))
"""


def test_a_routine_asking_an_object_it_made_does_not_split_the_callers_paths() -> None:
    # feiyuhuahuo/Anomaly_Prediction: the step of the discriminator before the generator's backward
    # is found whether or not an evaluation routine asks a label loader it makes about its settings.
    buggy = _found(_EVALUATED.format(step_d="opt_d.step()", step_d_after="pass"))
    assert [code for _, code in buggy] == ["GG011"]
    assert _found(_EVALUATED.format(step_d="pass", step_d_after="opt_d.step()")) == []


# -- computations that draw fresh random numbers -----------------------------------------------------------

_ROLLOUT = """
    class ActorCritic(nn.Module):
        def __init__(self):
            super().__init__()
            self.trunk = nn.Linear(8, 16)
            self.actor = nn.Linear(16, 4)
            self.critic = nn.Linear(16, 1)

        def forward(self, obs):
            h = torch.relu(self.trunk(obs))
            return self.actor(h), self.critic(h).squeeze(-1)


    def collect(model, n):
        {draw}
        logits, values = model(obs)
        dist = torch.distributions.Categorical(logits=logits)
        actions = dist.sample()
        rewards = (actions == 0).float()
        return dist.log_prob(actions), values, rewards


    model = ActorCritic()
    actor_opt = torch.optim.Adam(list(model.trunk.parameters()) + list(model.actor.parameters()), lr=1e-3)
    critic_opt = torch.optim.Adam(model.critic.parameters(), lr=1e-3)
    fixed_obs = torch.ones(32, 8)
    for update in range(5):
        log_probs, values, rewards = collect(model, 32)
        advantage = rewards - values
        critic_loss = advantage.pow(2).mean()
        actor_loss = -(log_probs * advantage).mean()
        critic_opt.zero_grad()
        critic_loss.backward(retain_graph=True)
        critic_opt.step()
        actor_opt.zero_grad()
        actor_loss.backward()
        actor_opt.step()
"""


def test_a_computation_that_draws_is_not_run_again_as_a_fix() -> None:
    # A2C: recomputing the actor loss would run the rollout again (new observations and actions).
    source = "import torch\nimport torch.nn as nn\n" + textwrap.dedent(_ROLLOUT.format(draw="obs = torch.randn(n, 8)"))
    found = analyze(source)
    assert [d.code for d in found] == ["GG011"]
    assert found[0].fix is None


_INLINE_DRAW = """
    actor = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 6))
    critic = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
    actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
    critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
    for it in range(4):
        target = torch.ones(8, 1)
        q = critic(actor({inputs}))
        critic_loss = (q - target).pow(2).mean()
        actor_loss = -q.mean()
        critic_opt.zero_grad()
        critic_loss.backward(retain_graph=True)
        critic_opt.step()
        actor_opt.zero_grad()
        actor_loss.backward()
        actor_opt.step()
"""


def test_a_draw_written_in_the_recomputed_statement_itself_is_not_run_again() -> None:
    # Another shape: no helper, the noise drawn in the statement the fix would repeat. With the input
    # bound before it instead, the same program gets the recompute (nothing drawn is repeated).
    head = "import torch\nimport torch.nn as nn\n"
    drawn = analyze(head + textwrap.dedent(_INLINE_DRAW.format(inputs="torch.randn(8, 4)")))
    assert [d.code for d in drawn] == ["GG011"]
    assert drawn[0].fix is None
    bound = analyze(head + textwrap.dedent(_INLINE_DRAW.format(inputs="x")).replace(
        "for it in range(4):\n", "for it in range(4):\n    x = torch.randn(8, 4)\n"))
    assert [d.code for d in bound] == ["GG011"]
    assert bound[0].fix is not None


def test_the_statements_that_draw_are_known_through_the_helpers_they_call() -> None:
    from gradguard.analysis import facts_for
    from gradguard.codemods import names_read

    source = "import torch\nimport torch.nn as nn\n" + textwrap.dedent(_ROLLOUT.format(draw="obs = torch.randn(n, 8)"))
    facts = facts_for(source)
    assert facts is not None
    drawing = sorted(facts.code(s).strip() for s in facts.draws)
    assert any(code.startswith("log_probs, values, rewards = collect(") for code in drawing)
    assert not any("advantage" in code for code in drawing)
    assert "collect" in set().union(*(names_read(s) for s in facts.draws))
