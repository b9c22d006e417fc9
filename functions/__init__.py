"""function-dynamo: the NVIDIA Dynamo operator as Crossplane composition functions."""

__version__ = "0.1.0"
