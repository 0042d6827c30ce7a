"""The paper's language-model helpers (language/common.py, language/features.py) on random weights in float64:
the SAE-basis identity of an output latent's interaction matrix (section 3.1), the annotation of the planted negation
events, and the one checkpoint layout of the transformer and SAE runs."""
import pytest
import torch

from replications.bilinear_mlp.language.analyze_negation import negated_shares, spectrum_summary
from replications.bilinear_mlp.language.common import annotate_events, build, load_lm, load_sae
from replications.bilinear_mlp.language.features import feature_interactions
from shared.io.checkpoints import save_models
from shared.nn import bilinear_analysis as analysis
from shared.nn.sae import TopKSAE
from shared.nn.transformer import Transformer
from shared.stats import rel_err

F64 = torch.float64
REL = 1e-12


@pytest.fixture
def mlp_and_saes():
    """A random bilinear MLP (d 6, hidden 10) and random input/output SAEs with non-zero decoder biases."""
    torch.manual_seed(0)
    model = Transformer(7, d_model=6, d_hidden=10, n_head=1, n_layer=1, n_ctx=4).double()
    sae_in, sae_out = TopKSAE(6, 12, 3).double(), TopKSAE(6, 9, 2).double()
    with torch.no_grad():
        sae_in.b_dec.normal_()
        sae_out.b_dec.normal_()
    return model, sae_in, sae_out


def test_sae_basis_identity(mlp_and_saes):
    """e_f . mlp(D z + b) = [z, 1]^T (D'^T Q_f D') [z, 1] with D' = [D, b], for every output latent f."""
    model, sae_in, sae_out = mlp_and_saes
    z = sae_in.encode(torch.randn(40, 6, dtype=F64) * 3)
    exact = model.blocks[0].mlp(sae_in.decode(z)) @ sae_out.encoder.T
    lifted = torch.cat([sae_in.decoder, sae_in.b_dec[:, None]], 1)
    z1 = analysis.append_one(z)
    for f, q in feature_interactions(model, 0, sae_out, range(9), chunk=4):
        via_basis = ((z1 @ analysis.in_basis(q, lifted)) * z1).sum(-1)
        assert rel_err(via_basis, exact[:, f], norm="l2") < REL


def test_event_annotation_follows_the_planted_grammar():
    words = "[BOS] the cake was not good . so tom cried . tom liked the dog . so tom smiled . the sun was warm .".split()
    negated, polarity, in_event = annotate_events(words)
    at = {i: (int(negated[i]), int(polarity[i]), bool(in_event[i])) for i in range(len(words))}
    assert at[4] == (1, 0, True)    # "not": negation seen, polarity not yet known
    assert at[5] == (1, 1, True)    # "good" in a negated sentence
    assert at[9] == (1, 1, True)    # "cried": the reaction carries the completed event
    assert at[12] == (0, 1, True)   # "liked"
    assert at[18] == (0, 1, True)   # "smiled"
    assert at[21] == (0, 0, False)  # "sun": a filler sentence is outside any event


def test_checkpoints_hold_one_run_each_and_build_dispatches_on_its_kind(tmp_path):
    lm_spec = {"name": "bilinear", "seed": 0, "kind": "lm", "mlp": "bilinear", "vocab_size": 7,
               "model": {"d_model": 8, "d_hidden": 16, "n_head": 2, "n_layer": 1, "n_ctx": 4}}
    sae_spec = {"name": "mlp_out_x1", "seed": 0, "kind": "sae", "d_model": 8, "n_features": 16, "k": 2}
    torch.manual_seed(0)
    lm, sae = build(lm_spec), build(sae_spec)
    assert isinstance(lm, Transformer) and isinstance(sae, TopKSAE)
    save_models(tmp_path / "lm.safetensors", {"bilinear": lm}, {"runs": [lm_spec], "device": "cpu"})
    save_models(tmp_path / "sae.safetensors", {"mlp_out_x1": sae}, {"runs": [sae_spec], "steps": 5})
    loaded, meta = load_lm(tmp_path / "lm.safetensors")
    assert meta["runs"][0]["mlp"] == "bilinear" and not loaded.training
    assert all(torch.equal(a, b) for a, b in zip(lm.state_dict().values(), loaded.state_dict().values()))
    loaded_sae, sae_meta = load_sae(tmp_path / "sae.safetensors")
    assert sae_meta["steps"] == 5 and torch.equal(loaded_sae.encoder, sae.encoder)
    with pytest.raises(ValueError, match="kind"):
        build({**sae_spec, "kind": "mlp"})


def test_negated_shares_split_each_latents_mass_over_the_negated_cells():
    """Latent 0 fires only on a negated positive event, latent 1 half there and half on an affirmed one."""
    negated = torch.tensor([1, 1, 0, 0])
    polarity = torch.tensor([1, -1, 1, 0])
    in_event = torch.tensor([True, True, True, False])
    codes = torch.tensor([[2.0, 1.0], [0.0, 0.0], [0.0, 1.0], [0.0, 0.0]], dtype=F64)
    shares = negated_shares(codes, negated, polarity, in_event)
    assert shares[1].tolist() == [1.0, 0.5] and shares[-1].tolist() == [0.0, 0.0]


def test_spectrum_summary_tells_an_and_from_a_square():
    """a b (one +/- eigenvalue pair) stands out; a^2 + b^2 (two positive eigenvalues) does not."""
    and_gate = torch.zeros(5, 5, dtype=F64)
    and_gate[0, 1] = and_gate[1, 0] = 0.5
    and_gate[2, 2] = 0.1
    squares = torch.diag(torch.tensor([1.0, 1.0, 0.1, 0.0, 0.0], dtype=F64))
    assert spectrum_summary(and_gate)[2] == pytest.approx(5.0)
    assert spectrum_summary(squares)[2] == pytest.approx(0.0)
