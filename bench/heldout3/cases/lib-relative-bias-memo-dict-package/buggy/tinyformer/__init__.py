from .model import SeqClassifier
