"""Pure renderers: (normalised graph, platform config) -> Kubernetes objects as dicts."""
