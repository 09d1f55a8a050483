from .models import WorldModel, Actor
from .agent import Agent
