from .neurons import Leaky


def reset(net):
    """Clear the membrane potential of every spiking layer of `net`."""
    for module in net.modules():
        if isinstance(module, Leaky):
            module.reset_mem()
