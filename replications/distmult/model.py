"""One relation scorer per run spec (shared.nn.relation_scoring): the spec names its kind and sizes."""
from shared.nn.relation_scoring import RelationScorer


def build(spec):
    return RelationScorer(spec["kind"], spec["n_entities"], spec["n_relations"], spec["dim"],
                          entity_tanh=spec.get("entity_tanh", False), ntn_slices=spec.get("ntn_slices", 4))
