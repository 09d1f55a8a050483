from .buffer import ReplayBuffer
from .networks import ObsEncoder, QHead
from .learner import Learner
